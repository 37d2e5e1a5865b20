import { PAIRED_DEVICE_COLUMNS } from '../../shared/pairing/storedDevice.ts';
import type { SqliteDatabase } from './sqlite.ts';

const SCHEMA = `
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS devices (${PAIRED_DEVICE_COLUMNS}
  paired_at INTEGER NOT NULL,
  revoked_at INTEGER
);
-- Phones a paired phone approved adding, until latch pair has the relay's confirmation: apart
-- from devices, so that no version of Latch, an older one run again included, trusts them.
CREATE TABLE IF NOT EXISTS awaiting_devices (${PAIRED_DEVICE_COLUMNS}
  approved_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS used_tokens (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
  request_id TEXT PRIMARY KEY,
  dedup_key TEXT NOT NULL,
  details TEXT NOT NULL,
  binding TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS switch (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  frozen INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  reason TEXT,
  cause TEXT,
  frozen_at INTEGER
);
INSERT OR IGNORE INTO switch (id, frozen, epoch) VALUES (1, 0, 0);
CREATE TABLE IF NOT EXISTS freezes (
  id TEXT PRIMARY KEY,
  applied_at INTEGER NOT NULL,
  ended_at INTEGER,
  replayed_at INTEGER
);
CREATE TABLE IF NOT EXISTS resume_votes (
  freeze TEXT NOT NULL,
  device TEXT NOT NULL,
  counted_at INTEGER NOT NULL,
  PRIMARY KEY (freeze, device)
);
CREATE TABLE IF NOT EXISTS totp_used (step INTEGER PRIMARY KEY, used_at INTEGER NOT NULL);
`;

/**
 * Columns added to tables that earlier versions created: added at open where missing. `fill`
 * runs at every open, with the time, for rows that need a value and have none: those of an
 * earlier version, including one run again after this one (a downgrade).
 */
const ADDED_COLUMNS: readonly { table: string; column: string; type: string; fill?: string }[] = [
  // The id of the freeze in force (kill-switch/freezeId), which resume votes must name.
  { table: 'switch', column: 'freeze', type: 'TEXT' },
  // When the freeze in force was applied here: a freeze with no id is ordered by it. One in force
  // with none is taken as applied at this open (later than it was: the safe direction).
  {
    table: 'switch',
    column: 'frozen_at',
    type: 'INTEGER',
    fill: 'UPDATE switch SET frozen_at = ? WHERE frozen = 1 AND frozen_at IS NULL',
  },
  // When each freeze was signed (its envelope's ts): an older one never ends a newer one.
  { table: 'freezes', column: 'signed_at', type: 'INTEGER' },
  // The agent session a request came from: a report refuses that session even after the request ended.
  { table: 'requests', column: 'conversation', type: 'TEXT' },
  // A revoke of the phone asked in the app by a phone not paired here, which cannot be checked:
  // `latch devices` shows it until the person revokes the phone here (pairing/revokeDevice).
  { table: 'devices', column: 'revoke_asked_by', type: 'TEXT' },
  { table: 'devices', column: 'revoke_asked_at', type: 'INTEGER' },
  // The phone whose approval settled a request: the one that approved adding a phone must still
  // be trusted when `latch pair` confirms it (state/deviceStore.ts).
  { table: 'requests', column: 'approved_by', type: 'TEXT' },
  { table: 'awaiting_devices', column: 'approved_by', type: 'TEXT' },
  // A request's deadline (its details' exp): `[retention] max_requests` keeps the latest settled
  // ones by it, and never one whose deadline has not passed (requestStore.capSettled).
  {
    table: 'requests',
    column: 'expires_at',
    type: 'INTEGER',
    fill: "UPDATE requests SET expires_at = COALESCE(json_extract(details, '$.exp'), ?) WHERE expires_at IS NULL",
  },
  // When the rule a waiting request may bring was revoked (`latch policy revoke --all`, a freeze,
  // a phone's revoke): its approval then adds none (grants/grantStore). Earlier versions marked it
  // in used_tokens, forgot by the clock.
  {
    table: 'requests',
    column: 'rule_revoked_at',
    type: 'INTEGER',
    fill: `UPDATE requests SET rule_revoked_at = ? WHERE rule_revoked_at IS NULL
             AND request_id IN (SELECT substr(key, 15) FROM used_tokens WHERE key LIKE 'grant-revoked:%')`,
  },
  // When a phone's report of the request was acted on: once only, for as long as the record is
  // kept (gate/relayAnswers). Earlier versions marked it in used_tokens, forgot by the clock.
  {
    table: 'requests',
    column: 'reported_at',
    type: 'INTEGER',
    fill: `UPDATE requests SET reported_at = ? WHERE reported_at IS NULL
             AND request_id IN (SELECT substr(key, 8) FROM used_tokens WHERE key LIKE 'report:%')`,
  },
];

/** Made once the columns they index exist. */
const INDEXES = `
CREATE INDEX IF NOT EXISTS requests_settled_by_deadline ON requests (expires_at) WHERE state != 'pending';
`;

/** Creates what is missing: the tables of a new file, the columns an older version lacked. */
export function migrateState(db: SqliteDatabase): void {
  db.exec(SCHEMA);
  // Under the write lock: the CLI and the daemon may open an older file at the same moment.
  db.transaction(
    () => {
      for (const { table, column, type, fill } of ADDED_COLUMNS) {
        const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
        if (!columns.some(({ name }) => name === column))
          db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
        if (fill) db.prepare(fill).run(Date.now());
      }
      db.exec(INDEXES);
    },
    { immediate: true },
  );
}
