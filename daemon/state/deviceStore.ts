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
    this.#insert(device, now, null);
  }

  /**
   * Stores a phone a paired phone approved adding, not yet trusted: `latch pair` confirms it once
   * the relay has taken its pairing, so a pairing refused by the relay, or given up (Ctrl-C, a
   * `latch pair` killed), leaves no phone trusted. Every list and look-up here leaves it out.
   * One left from a pairing given up makes way for the next pairing of its id.
   */
  addAwaitingConfirmation(device: PairedDevice, now: number): void {
    this.forgetAwaiting(device.id);
    this.#insert(device, now, now);
  }

  /**
   * Trusts the phone stored awaiting confirmation with these very keys: false when there is none
   * (forgotten, revoked, or replaced by another pairing of its id meanwhile).
   */
  confirm(device: PairedDevice, now: number): boolean {
    return (
      this.#statements
        .get(
          `UPDATE devices SET awaiting_since = NULL, paired_at = ?
           WHERE id = ? AND ecdh_key = ? AND credential_id = ? AND credential_key = ?
             AND awaiting_since IS NOT NULL AND revoked_at IS NULL`,
        )
        .run(now, device.id, device.ecdhKey, device.credential.id, device.credential.publicKey).changes === 1
    );
  }

  /** Removes a phone stored awaiting confirmation, as if never added: false when there is none. */
  forgetAwaiting(id: string): boolean {
    return (
      this.#statements.get('DELETE FROM devices WHERE id = ? AND awaiting_since IS NOT NULL').run(id)
        .changes === 1
    );
  }

  /** Forgets phones whose pairing was given up before `before`. */
  pruneAwaiting(before: number): void {
    this.#statements.get('DELETE FROM devices WHERE awaiting_since < ?').run(before);
  }

  #insert(device: PairedDevice, now: number, awaitingSince: number | null): void {
    this.#statements
      .get(
        `INSERT INTO devices (id, name, device_key, ecdh_key, credential_id, credential_key, counter, paired_at, awaiting_since)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        device.id,
        device.name,
        device.deviceKey,
        device.ecdhKey,
        device.credential.id,
        device.credential.publicKey,
        device.credential.counter,
        now,
        awaitingSince,
      );
  }

  list(options: { includeRevoked?: boolean } = {}): StoredDevice[] {
    const revoked = options.includeRevoked ? '' : 'AND revoked_at IS NULL';
    return (
      this.#statements
        .get(`SELECT * FROM devices WHERE awaiting_since IS NULL ${revoked} ORDER BY paired_at`)
        .all() as DeviceRow[]
    ).map(toDevice);
  }

  active(id: string): PairedDevice | undefined {
    const row = this.#statements
      .get('SELECT * FROM devices WHERE id = ? AND revoked_at IS NULL AND awaiting_since IS NULL')
      .get(id) as DeviceRow | undefined;
    return row ? toDevice(row) : undefined;
  }

  byCredential(credentialId: string): PairedDevice | undefined {
    const row = this.#statements
      .get('SELECT * FROM devices WHERE credential_id = ? AND revoked_at IS NULL AND awaiting_since IS NULL')
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
      .get(
        'UPDATE devices SET revoke_asked_by = ?, revoke_asked_at = ? WHERE id = ? AND revoked_at IS NULL AND awaiting_since IS NULL',
      )
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

  revoke(id: string, now: number): boolean {
    return (
      this.#statements
        .get(
          'UPDATE devices SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL AND awaiting_since IS NULL',
        )
        .run(now, id).changes === 1
    );
  }
}
