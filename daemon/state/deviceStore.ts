import { credentialOfRow, type PairedDeviceRow } from '../../shared/pairing/storedDevice.ts';
import type { PairedDevice } from '../../shared/pairing/verifyPairingCompletion.ts';
import type { PreparedStatements } from './preparedStatements.ts';

export type StoredDevice = PairedDevice & {
  pairedAt: number;
  revoked: boolean;
  /** The last revoke of it asked in the app by a phone not paired here, while it is trusted. */
  revokeAsked?: { by: string; at: number };
};

interface DeviceRow extends PairedDeviceRow {
  paired_at: number;
  revoke_asked_by: string | null;
  revoke_asked_at: number | null;
}

function toDevice(row: DeviceRow): StoredDevice {
  return {
    id: row.id,
    name: row.name,
    deviceKey: row.device_key,
    ecdhKey: row.ecdh_key,
    credential: credentialOfRow(row),
    pairedAt: row.paired_at,
    revoked: row.revoked_at !== null,
    ...(row.revoked_at === null && row.revoke_asked_by !== null && row.revoke_asked_at !== null
      ? { revokeAsked: { by: row.revoke_asked_by, at: row.revoke_asked_at } }
      : {}),
  };
}

const deviceValues = (device: PairedDevice) =>
  [
    device.id,
    device.name,
    device.deviceKey,
    device.ecdhKey,
    device.credential.id,
    device.credential.publicKey,
    device.credential.counter,
  ] as const;

/** The columns that make a phone kept awaiting confirmation the one `latch pair` checked. */
const SAME_KEYS = 'id = ? AND ecdh_key = ? AND credential_id = ? AND credential_key = ?';
const sameKeys = (device: PairedDevice) =>
  [device.id, device.ecdhKey, device.credential.id, device.credential.publicKey] as const;

/**
 * What came of `latch pair`'s confirmation of a phone kept awaiting it: trusted, or why not (none
 * awaits with these keys; its id is stored already, revoked here meanwhile or paired anew; the
 * phone whose approval added it was revoked here meanwhile).
 */
export type ConfirmOutcome = 'confirmed' | 'not_awaiting' | 'paired_before' | 'approver_revoked';

/** The paired phones: their keys, their credential's counter, and whether they were revoked. */
export class DeviceStore {
  readonly #statements: PreparedStatements;

  constructor(statements: PreparedStatements) {
    this.#statements = statements;
  }

  /**
   * An id is added once: a phone revoked here never comes back under it (pairing/pairedBefore),
   * so a revoke made in the app, which names the id and never expires, cannot reach a phone
   * paired later. A second add of an id throws (its PRIMARY KEY).
   */
  add(device: PairedDevice, now: number): void {
    this.#statements
      .get(
        `INSERT INTO devices (id, name, device_key, ecdh_key, credential_id, credential_key, counter, paired_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(...deviceValues(device), now);
  }

  /**
   * Keeps a phone a paired phone approved adding, apart from the trusted ones: `latch pair`
   * confirms it once the relay has taken its pairing, so a pairing the relay refused, or that was
   * given up (Ctrl-C, a `latch pair` killed), leaves no phone trusted. One left by a pairing of
   * its id or credential given up makes way.
   */
  addAwaitingConfirmation(device: PairedDevice, now: number, approvedBy: string | undefined): void {
    this.#statements
      .get(
        `INSERT OR REPLACE INTO awaiting_devices
           (id, name, device_key, ecdh_key, credential_id, credential_key, counter, approved_at, approved_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(...deviceValues(device), now, approvedBy ?? null);
  }

  /**
   * Trusts the phone kept awaiting confirmation with these very keys, in the caller's
   * transaction. Not when there is none (forgotten, replaced by another pairing of its id), when
   * its id or credential is stored already (a revoke of it since the approval stores it revoked),
   * or when the phone that approved it is no longer trusted here (revoked meanwhile): the
   * strictest reading, since that approval is all this host had for the new phone. One kept by
   * an earlier version, which did not note its approver, is judged without it. Either way it is
   * no longer kept.
   */
  confirm(device: PairedDevice, now: number): ConfirmOutcome {
    const awaiting = this.#statements
      .get(`SELECT approved_by FROM awaiting_devices WHERE ${SAME_KEYS}`)
      .get(...sameKeys(device)) as { approved_by: string | null } | undefined;
    if (!awaiting) {
      // Revoked here meanwhile (stored revoked, see revoke), or paired anew under its id.
      const stored = this.#statements.get('SELECT 1 FROM devices WHERE id = ?').get(device.id);
      return stored === undefined ? 'not_awaiting' : 'paired_before';
    }
    if (awaiting.approved_by !== null && !this.active(awaiting.approved_by)) {
      this.forgetAwaiting(device);
      return 'approver_revoked';
    }
    const moved = this.#statements
      .get(
        `INSERT OR IGNORE INTO devices
           (id, name, device_key, ecdh_key, credential_id, credential_key, counter, paired_at)
         SELECT id, name, device_key, ecdh_key, credential_id, credential_key, counter, ?
         FROM awaiting_devices WHERE ${SAME_KEYS}`,
      )
      .run(now, ...sameKeys(device)).changes;
    this.forgetAwaiting(device);
    return moved === 1 ? 'confirmed' : 'paired_before';
  }

  /** Whether a phone with this id is kept awaiting `latch pair`'s confirmation. */
  isAwaiting(id: string): boolean {
    return this.#statements.get('SELECT 1 FROM awaiting_devices WHERE id = ?').get(id) !== undefined;
  }

  /** Forgets every phone kept awaiting confirmation under this id: false when there is none. */
  forgetAwaitingId(id: string): boolean {
    return this.#statements.get('DELETE FROM awaiting_devices WHERE id = ?').run(id).changes > 0;
  }

  /** Forgets the phone kept awaiting confirmation with these very keys: false when there is none. */
  forgetAwaiting(device: PairedDevice): boolean {
    return (
      this.#statements.get(`DELETE FROM awaiting_devices WHERE ${SAME_KEYS}`).run(...sameKeys(device))
        .changes === 1
    );
  }

  /** Forgets phones whose pairing was given up before `before`. */
  pruneAwaiting(before: number): void {
    this.#statements.get('DELETE FROM awaiting_devices WHERE approved_at < ?').run(before);
  }

  list(options: { includeRevoked?: boolean } = {}): StoredDevice[] {
    const where = options.includeRevoked ? '' : 'WHERE revoked_at IS NULL';
    return (
      this.#statements.get(`SELECT * FROM devices ${where} ORDER BY paired_at`).all() as DeviceRow[]
    ).map(toDevice);
  }

  active(id: string): PairedDevice | undefined {
    const row = this.#statements.get('SELECT * FROM devices WHERE id = ? AND revoked_at IS NULL').get(id) as
      DeviceRow | undefined;
    return row ? toDevice(row) : undefined;
  }

  byCredential(credentialId: string): PairedDevice | undefined {
    const row = this.#statements
      .get('SELECT * FROM devices WHERE credential_id = ? AND revoked_at IS NULL')
      .get(credentialId) as DeviceRow | undefined;
    return row ? toDevice(row) : undefined;
  }

  /**
   * Stores a passkey's signature counter, if it is above the one stored (or both are 0, as synced
   * passkeys report): false when another assertion, checked at the same time, got there first.
   */
  advanceCounter(device: string, counter: number): boolean {
    return (
      this.#statements
        .get('UPDATE devices SET counter = ? WHERE id = ? AND (counter < ? OR (counter = 0 AND ? = 0))')
        .run(counter, device, counter, counter).changes === 1
    );
  }

  /** Keeps the last revoke asked by a phone not paired here: one per trusted phone, however many come. */
  noteRevokeAsked(id: string, by: string, now: number): void {
    this.#statements
      .get('UPDATE devices SET revoke_asked_by = ?, revoke_asked_at = ? WHERE id = ? AND revoked_at IS NULL')
      .run(by, now, id);
  }

  /**
   * Forgets a revoke asked by a phone not paired here, the phone kept (the person did not ask
   * it, or a relay made it up): false when the phone has no such mark.
   */
  keepDespiteRevokeAsked(id: string): boolean {
    return (
      this.#statements
        .get(
          'UPDATE devices SET revoke_asked_by = NULL, revoke_asked_at = NULL WHERE id = ? AND revoke_asked_by IS NOT NULL',
        )
        .run(id).changes === 1
    );
  }

  /**
   * Ends the trust in a phone, in the caller's transaction: false when no phone with that id is
   * trusted or awaiting confirmation. One awaiting `latch pair`'s confirmation (approved, the
   * relay's confirmation perhaps taken already) is stored revoked, so that the confirmation finds
   * its id taken and never trusts it, and it never pairs here again (pairing/pairedBefore).
   */
  revoke(id: string, now: number): boolean {
    if (
      this.#statements
        .get('UPDATE devices SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
        .run(now, id).changes === 1
    )
      return true;
    // The latest approved under the id, should a given-up pairing of it have left another.
    const stored = this.#statements
      .get(
        `INSERT OR IGNORE INTO devices
           (id, name, device_key, ecdh_key, credential_id, credential_key, counter, paired_at, revoked_at)
         SELECT id, name, device_key, ecdh_key, credential_id, credential_key, counter, approved_at, ?
         FROM awaiting_devices WHERE id = ? ORDER BY approved_at DESC LIMIT 1`,
      )
      .run(now, id).changes;
    this.forgetAwaitingId(id);
    return stored === 1;
  }
}
