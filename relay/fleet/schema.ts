import { PAIRED_DEVICE_COLUMNS } from '../../shared/pairing/storedDevice.ts';
import { row } from './context.ts';

/**
 * The fleet's tables. Applied at every start with IF NOT EXISTS; a change to an existing table
 * gets a new numbered step in MIGRATIONS instead of an edit here.
 *
 * Nothing here holds a command or any text an agent wrote: requests are metadata plus one
 * sealed box per phone, and tokens are stored only as hashes.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS hosts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  host_key TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  next_token_hash TEXT,
  quorum INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS devices (${PAIRED_DEVICE_COLUMNS}
  push_endpoint TEXT,
  push_p256dh TEXT,
  push_auth TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);

CREATE TABLE IF NOT EXISTS pairings (
  host TEXT NOT NULL,
  device TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (host, device)
);

CREATE TABLE IF NOT EXISTS offers (
  offer_id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  offer TEXT NOT NULL,
  offer_token_hash TEXT NOT NULL,
  member_only INTEGER NOT NULL,
  exp INTEGER NOT NULL,
  completion TEXT,
  confirmed_at INTEGER
);

CREATE TABLE IF NOT EXISTS requests (
  request_id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  conversation TEXT NOT NULL,
  dedup_key TEXT NOT NULL,
  risk TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  exp INTEGER NOT NULL,
  request_hash TEXT NOT NULL,
  nonce TEXT NOT NULL,
  state TEXT NOT NULL,
  decision TEXT,
  decided_by TEXT,
  decided_at INTEGER
);
CREATE INDEX IF NOT EXISTS requests_by_state ON requests (state, exp);
CREATE INDEX IF NOT EXISTS requests_by_dedup ON requests (host, dedup_key, state);

CREATE TABLE IF NOT EXISTS sealed_boxes (
  request_id TEXT NOT NULL,
  device TEXT NOT NULL,
  box TEXT NOT NULL,
  PRIMARY KEY (request_id, device)
);

CREATE TABLE IF NOT EXISTS nonces (nonce TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);

CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  host TEXT,
  event TEXT NOT NULL,
  at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS switch (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  frozen INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  reason TEXT,
  frozen_at INTEGER,
  frozen_by_role TEXT,
  frozen_by_id TEXT
);
INSERT OR IGNORE INTO switch (id, frozen, epoch) VALUES (1, 0, 0);

CREATE TABLE IF NOT EXISTS votes (
  epoch INTEGER NOT NULL,
  device TEXT NOT NULL,
  vote TEXT NOT NULL,
  PRIMARY KEY (epoch, device)
);

CREATE TABLE IF NOT EXISTS push_log (
  host TEXT NOT NULL,
  conversation TEXT NOT NULL,
  kind TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS push_log_by_host ON push_log (host, kind, at);
`;

/**
 * Changes to the tables above, in order: step n (MIGRATIONS[n - 1]) runs once per object, in one
 * transaction with the record that it ran (meta `schema_step`). A new object runs every step
 * after SCHEMA, an object created under an earlier version runs the ones it lacks, so both end
 * with the same tables.
 */
const MIGRATIONS: readonly string[] = [
  // 1. Votes to resume bind to the freeze in force, named by its envelope (kill-switch/freezeId),
  // no longer to the epoch: the switch keeps the envelope and its id, votes are kept by freeze
  // id. Votes cast for an epoch cannot be counted toward an id, so they go with their table.
  `ALTER TABLE switch ADD COLUMN envelope TEXT;
   ALTER TABLE switch ADD COLUMN freeze_id TEXT;
   DROP TABLE votes;
   CREATE TABLE votes (
     freeze TEXT NOT NULL,
     device TEXT NOT NULL,
     vote TEXT NOT NULL,
     PRIMARY KEY (freeze, device)
   );`,
  // 2. A request remembers whether its notification went out (1) or the caps held it back (0):
  // only a notification that was shown has to be closed when the request stops waiting.
  `ALTER TABLE requests ADD COLUMN pushed INTEGER NOT NULL DEFAULT 0;`,
  // 3. What runs on every request and decision finds its rows by index, not by reading tables
  // that grow with the traffic (at 60,000 rows each read took 11 to 400 ms): the sweeps of old
  // nonces and of the push log's past hour, and the alarm's reads (retention.ts) of the oldest
  // settled request and of the newest freeze and resume, whose expression is events.ts's own.
  `CREATE INDEX IF NOT EXISTS nonces_by_expiry ON nonces (expires_at);
   CREATE INDEX IF NOT EXISTS push_log_by_time ON push_log (at);
   CREATE INDEX IF NOT EXISTS requests_settled_by_exp ON requests (exp) WHERE state != 'pending';
   CREATE INDEX IF NOT EXISTS events_by_type ON events (json_extract(event, '$.type'), seq);
   CREATE INDEX IF NOT EXISTS events_by_time ON events (at);`,
  // 4. Who may take an offer from a host the fleet does not know is judged when it is answered
  // and confirmed (pairing.ts, strangerRefused), no longer recorded when it is filed.
  `ALTER TABLE offers DROP COLUMN member_only;`,
  // 5. A phone's pending list reads each host's pending requests newest first, and stops at what
  // it lists (requests.ts, pendingListed), instead of ranking every pending request it can see.
  `CREATE INDEX IF NOT EXISTS requests_pending_by_host ON requests (host, created_at) WHERE state = 'pending';`,
];

/** Brings the object's storage to the current tables: SCHEMA, then the steps it has not run. */
export function applySchema(storage: DurableObjectStorage): void {
  storage.sql.exec(SCHEMA);
  const done = Number(
    row<{ value: string }>(storage.sql, "SELECT value FROM meta WHERE key = 'schema_step'")?.value ?? 0,
  );
  for (const [index, migration] of MIGRATIONS.entries()) {
    if (index < done) continue;
    storage.transactionSync(() => {
      storage.sql.exec(migration);
      storage.sql.exec(
        "INSERT INTO meta (key, value) VALUES ('schema_step', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        String(index + 1),
      );
    });
  }
}
