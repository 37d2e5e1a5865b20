import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import type { ApprovalBinding } from '../../shared/approvals/approvalChallenge.ts';
import type { SingleUseStore } from '../../shared/approvals/singleUseStore.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import type { PairedDevice } from '../../shared/pairing/verifyPairingCompletion.ts';
import { SqliteDatabase, type SqliteStatement } from './sqlite.ts';

const SCHEMA = `
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS devices (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  device_key TEXT NOT NULL,
  ecdh_key TEXT NOT NULL,
  credential_id TEXT NOT NULL UNIQUE,
  credential_key TEXT NOT NULL,
  counter INTEGER NOT NULL,
  paired_at INTEGER NOT NULL,
  revoked_at INTEGER
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
  cause TEXT
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

/** Columns added to tables that earlier versions created: added at open where missing. */
const ADDED_COLUMNS: readonly { table: string; column: string; type: string }[] = [
  // The id of the freeze in force (kill-switch/freezeId), which resume votes must name.
  { table: 'switch', column: 'freeze', type: 'TEXT' },
];

export interface SwitchState {
  frozen: boolean;
  /** This host's count of the freezes it applied. It advances here, never on the relay's word. */
  epoch: number;
  /**
   * The id (kill-switch/freezeId) of the freeze in force: the only freeze votes can end. Null
   * when not frozen, and for a freeze that has no signed envelope (strict mode, or a relay state
   * that announced one without it).
   */
  freeze: string | null;
  reason: string | null;
  /** Why it froze: 'relay' (a phone or host), 'panic' (this host), 'unreachable' (strict mode). */
  cause: 'relay' | 'panic' | 'unreachable' | null;
}

export interface RequestRecord {
  requestId: string;
  dedupKey: string;
  details: RequestDetails;
  binding: ApprovalBinding;
  /** `withdrawn`: nobody waited for the answer any more (gate/withdrawal); no answer counts. */
  state: 'pending' | 'approved' | 'denied' | 'expired' | 'withdrawn';
}

interface DeviceRow {
  id: string;
  name: string;
  device_key: string;
  ecdh_key: string;
  credential_id: string;
  credential_key: string;
  counter: number;
  paired_at: number;
  revoked_at: number | null;
}

function toDevice(row: DeviceRow): PairedDevice & { pairedAt: number; revoked: boolean } {
  return {
    id: row.id,
    name: row.name,
    deviceKey: row.device_key,
    ecdhKey: row.ecdh_key,
    credential: {
      id: row.credential_id,
      publicKey: row.credential_key,
      counter: row.counter,
      device: row.id,
    },
    pairedAt: row.paired_at,
    revoked: row.revoked_at !== null,
  };
}

/**
 * The daemon's durable state, in SQLite (WAL, synchronous FULL): paired phones, used tokens,
 * its own requests, the kill switch and every freeze it applied. The CLI and the daemon share
 * it; SQLite serialises them.
 */
export class StateStore implements SingleUseStore {
  readonly db: SqliteDatabase;
  // Prepared once: a statement prepared per call holds native memory until a full GC finds it.
  readonly #statements = new Map<string, SqliteStatement>();

  constructor(path: string) {
    if (!existsSync(path)) writeFileSync(path, '', { mode: 0o600 });
    this.db = new SqliteDatabase(path);
    this.db.exec(SCHEMA);
    this.#addMissingColumns();
    for (const suffix of ['-wal', '-shm']) {
      if (existsSync(path + suffix)) chmodSync(path + suffix, 0o600);
    }
  }

  close(): void {
    this.db.close();
  }

  /** Under the write lock: the CLI and the daemon may open an older file at the same moment. */
  #addMissingColumns(): void {
    this.db.transaction(
      () => {
        for (const { table, column, type } of ADDED_COLUMNS) {
          const columns = this.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
          if (!columns.some(({ name }) => name === column))
            this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
        }
      },
      { immediate: true },
    );
  }

  #statement(sql: string): SqliteStatement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  meta(key: string): string | undefined {
    return (this.#statement('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)
      ?.value;
  }

  setMeta(key: string, value: string): void {
    this.#statement(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ).run(key, value);
  }

  deleteMeta(key: string): void {
    this.#statement('DELETE FROM meta WHERE key = ?').run(key);
  }

  // Paired phones

  addDevice(device: PairedDevice, now: number): void {
    this.#statement(
      `INSERT INTO devices (id, name, device_key, ecdh_key, credential_id, credential_key, counter, paired_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, credential_id = excluded.credential_id,
           credential_key = excluded.credential_key, counter = excluded.counter, revoked_at = NULL`,
    ).run(
      device.id,
      device.name,
      device.deviceKey,
      device.ecdhKey,
      device.credential.id,
      device.credential.publicKey,
      device.credential.counter,
      now,
    );
  }

  devices(options: { includeRevoked?: boolean } = {}): ReturnType<typeof toDevice>[] {
    const where = options.includeRevoked ? '' : 'WHERE revoked_at IS NULL';
    return (this.#statement(`SELECT * FROM devices ${where} ORDER BY paired_at`).all() as DeviceRow[]).map(
      toDevice,
    );
  }

  activeDevice(id: string): PairedDevice | undefined {
    const row = this.#statement('SELECT * FROM devices WHERE id = ? AND revoked_at IS NULL').get(id) as
      DeviceRow | undefined;
    return row ? toDevice(row) : undefined;
  }

  deviceByCredential(credentialId: string): PairedDevice | undefined {
    const row = this.#statement('SELECT * FROM devices WHERE credential_id = ? AND revoked_at IS NULL').get(
      credentialId,
    ) as DeviceRow | undefined;
    return row ? toDevice(row) : undefined;
  }

  setCounter(device: string, counter: number): void {
    this.#statement('UPDATE devices SET counter = ? WHERE id = ?').run(counter, device);
  }

  revokeDevice(id: string, now: number): boolean {
    return (
      this.#statement('UPDATE devices SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id)
        .changes === 1
    );
  }

  // Single use (shared/approvals/singleUseStore): an INSERT is atomic across processes.

  consume(key: string, expiresAt: number): boolean {
    this.#statement('DELETE FROM used_tokens WHERE expires_at < ?').run(Date.now() - 86_400_000);
    return (
      this.#statement('INSERT OR IGNORE INTO used_tokens (key, expires_at) VALUES (?, ?)').run(key, expiresAt)
        .changes === 1
    );
  }

  // The daemon's own requests: what it verifies decisions against.

  saveRequest(record: RequestRecord, now: number): void {
    this.#statement(
      'INSERT INTO requests (request_id, dedup_key, details, binding, state, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(
      record.requestId,
      record.dedupKey,
      JSON.stringify(record.details),
      JSON.stringify(record.binding),
      record.state,
      now,
    );
  }

  request(requestId: string): RequestRecord | undefined {
    const row = this.#statement('SELECT * FROM requests WHERE request_id = ?').get(requestId) as
      | {
          request_id: string;
          dedup_key: string;
          details: string;
          binding: string;
          state: RequestRecord['state'];
        }
      | undefined;
    if (!row) return undefined;
    return {
      requestId: row.request_id,
      dedupKey: row.dedup_key,
      details: JSON.parse(row.details) as RequestDetails,
      binding: JSON.parse(row.binding) as ApprovalBinding,
      state: row.state,
    };
  }

  settleRequest(requestId: string, state: Exclude<RequestRecord['state'], 'pending'>): boolean {
    return (
      this.#statement("UPDATE requests SET state = ? WHERE request_id = ? AND state = 'pending'").run(
        state,
        requestId,
      ).changes === 1
    );
  }

  /** The requests still waiting for a phone's answer, oldest first. */
  pendingRequestIds(): string[] {
    return (
      this.#statement(
        "SELECT request_id FROM requests WHERE state = 'pending' ORDER BY created_at",
      ).all() as {
        request_id: string;
      }[]
    ).map(({ request_id }) => request_id);
  }

  deleteRequest(requestId: string): void {
    this.#statement('DELETE FROM requests WHERE request_id = ?').run(requestId);
  }

  pruneRequests(before: number): void {
    this.#statement("DELETE FROM requests WHERE created_at < ? AND state != 'pending'").run(before);
  }

  // The kill switch: the switch, every freeze applied here, and the votes counted toward each.

  switchState(): SwitchState {
    const row = this.#statement(
      'SELECT frozen, epoch, freeze, reason, cause FROM switch WHERE id = 1',
    ).get() as {
      frozen: number;
      epoch: number;
      freeze: string | null;
      reason: string | null;
      cause: SwitchState['cause'];
    };
    return {
      frozen: row.frozen === 1,
      epoch: row.epoch,
      freeze: row.freeze,
      reason: row.reason,
      cause: row.cause,
    };
  }

  /**
   * Puts a new freeze in force, in one transaction: the freeze in force before it ends (it is
   * superseded), this one is remembered by its id (when it has one), and the epoch advances.
   */
  applyFreeze(
    freeze: { id: string | null; reason: string; cause: NonNullable<SwitchState['cause']> },
    now: number,
  ): SwitchState {
    this.db.transaction(() => {
      this.#statement('UPDATE freezes SET ended_at = ? WHERE ended_at IS NULL').run(now);
      if (freeze.id !== null)
        this.#statement('INSERT INTO freezes (id, applied_at) VALUES (?, ?)').run(freeze.id, now);
      this.#statement(
        'UPDATE switch SET frozen = 1, epoch = epoch + 1, freeze = ?, reason = ?, cause = ? WHERE id = 1',
      ).run(freeze.id, freeze.reason, freeze.cause);
    });
    return this.switchState();
  }

  /** Lifts the switch; the freeze in force, if it has an id, ends for good. */
  liftFreeze(now: number): SwitchState {
    this.db.transaction(() => {
      this.#statement('UPDATE freezes SET ended_at = ? WHERE ended_at IS NULL').run(now);
      this.#statement(
        'UPDATE switch SET frozen = 0, freeze = NULL, reason = NULL, cause = NULL WHERE id = 1',
      ).run();
    });
    return this.switchState();
  }

  /**
   * Lifts the switch if the freeze with this id is still the one in force, and ends it for good.
   * Undefined when another freeze has taken its place.
   */
  endFreeze(id: string, now: number): SwitchState | undefined {
    return this.db.transaction(() => (this.switchState().freeze === id ? this.liftFreeze(now) : undefined));
  }

  /** Whether this freeze was applied here and has ended since: anything about it now is a replay. */
  freezeEnded(id: string): boolean {
    return (
      this.#statement('SELECT 1 FROM freezes WHERE id = ? AND ended_at IS NOT NULL').get(id) !== undefined
    );
  }

  /** Notes a replay of an ended freeze; true the first time, so that it is audited once. */
  noteReplay(id: string, now: number): boolean {
    return (
      this.#statement('UPDATE freezes SET replayed_at = ? WHERE id = ? AND replayed_at IS NULL').run(now, id)
        .changes === 1
    );
  }

  /**
   * Counts a device's vote toward ending a freeze: its single-use key is (freeze, device), so a
   * device counts once per freeze, whoever replays its vote and after any restart. False if it
   * was counted already.
   */
  countResumeVote(freeze: string, device: string, now: number): boolean {
    return (
      this.#statement('INSERT OR IGNORE INTO resume_votes (freeze, device, counted_at) VALUES (?, ?, ?)').run(
        freeze,
        device,
        now,
      ).changes === 1
    );
  }

  /** The devices, still paired, whose votes to end this freeze were counted. */
  resumeVoters(freeze: string): string[] {
    return (
      this.#statement(
        `SELECT resume_votes.device FROM resume_votes JOIN devices ON devices.id = resume_votes.device
           WHERE resume_votes.freeze = ? AND devices.revoked_at IS NULL ORDER BY resume_votes.counted_at`,
      ).all(freeze) as { device: string }[]
    ).map(({ device }) => device);
  }

  // TOTP: each time step's code is accepted once.

  consumeTotpStep(step: number, now: number): boolean {
    this.#statement('DELETE FROM totp_used WHERE used_at < ?').run(now - 3600_000);
    return (
      this.#statement('INSERT OR IGNORE INTO totp_used (step, used_at) VALUES (?, ?)').run(step, now)
        .changes === 1
    );
  }
}
