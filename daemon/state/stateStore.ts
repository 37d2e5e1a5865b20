import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import type { SingleUseStore } from '../../shared/approvals/singleUseStore.ts';
import type { PairedDevice } from '../../shared/pairing/verifyPairingCompletion.ts';
import { DeviceStore, type ConfirmOutcome, type StoredDevice } from './deviceStore.ts';
import { PreparedStatements } from './preparedStatements.ts';
import { RequestStore, type RequestRecord } from './requestStore.ts';
import { SqliteDatabase } from './sqlite.ts';
import { migrateState } from './stateSchema.ts';
import { SwitchStore, type SwitchState } from './switchStore.ts';

export type { RequestRecord } from './requestStore.ts';
export type { SwitchState } from './switchStore.ts';

/** In meta: the secret that keys the ids the relay sees of this host's calls (callKey). */
const CALL_KEY = 'call_key';

/**
 * The daemon's durable state, in SQLite (WAL, synchronous FULL): paired phones (deviceStore),
 * used tokens, its own requests (requestStore), the kill switch and every freeze it applied
 * (switchStore). The CLI and the daemon share it; SQLite serialises them.
 */
export class StateStore implements SingleUseStore {
  readonly db: SqliteDatabase;
  readonly #statements: PreparedStatements;
  readonly #devices: DeviceStore;
  readonly #requests: RequestStore;
  readonly #switch: SwitchStore;
  #callKey: Uint8Array | undefined;

  constructor(path: string) {
    if (!existsSync(path)) writeFileSync(path, '', { mode: 0o600 });
    this.db = new SqliteDatabase(path);
    migrateState(this.db);
    for (const suffix of ['-wal', '-shm']) {
      if (existsSync(path + suffix)) chmodSync(path + suffix, 0o600);
    }
    this.#statements = new PreparedStatements(this.db);
    this.#devices = new DeviceStore(this.#statements);
    this.#requests = new RequestStore(this.#statements);
    this.#switch = new SwitchStore(this.db, this.#statements);
  }

  close(): void {
    this.db.close();
  }

  meta(key: string): string | undefined {
    return (
      this.#statements.get('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined
    )?.value;
  }

  setMeta(key: string, value: string): void {
    this.#statements
      .get(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      )
      .run(key, value);
  }

  deleteMeta(key: string): void {
    this.#statements.get('DELETE FROM meta WHERE key = ?').run(key);
  }

  /**
   * This host's secret for the ids of its calls that the relay sees (gate/callIds): 32 random
   * bytes made at the first need and kept here, never sent anywhere. The daemon and the CLI may
   * both make one at once: the first INSERT wins, and both read that one.
   */
  callKey(): Uint8Array {
    if (this.#callKey) return this.#callKey;
    this.#statements
      .get('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)')
      .run(CALL_KEY, toBase64url(randomBytes(32)));
    const key = this.meta(CALL_KEY)!;
    // Damaged, it keys nothing: refused, never used short (the calls are then denied, not_recorded).
    if (!/^[A-Za-z0-9_-]{43}$/.test(key)) throw new Error(`state.db's ${CALL_KEY} is damaged`);
    this.#callKey = fromBase64url(key);
    return this.#callKey;
  }

  // Single use (shared/approvals/singleUseStore): an INSERT is atomic across processes.

  /** Whether `key` was consumed, without consuming it. */
  used(key: string): boolean {
    return this.#statements.get('SELECT 1 FROM used_tokens WHERE key = ?').get(key) !== undefined;
  }

  consume(key: string, expiresAt: number): boolean {
    this.#statements.get('DELETE FROM used_tokens WHERE expires_at < ?').run(Date.now() - 86_400_000);
    return (
      this.#statements
        .get('INSERT OR IGNORE INTO used_tokens (key, expires_at) VALUES (?, ?)')
        .run(key, expiresAt).changes === 1
    );
  }

  // TOTP: each time step's code is accepted once.

  consumeTotpStep(step: number, now: number): boolean {
    this.#statements.get('DELETE FROM totp_used WHERE used_at < ?').run(now - 3600_000);
    return (
      this.#statements.get('INSERT OR IGNORE INTO totp_used (step, used_at) VALUES (?, ?)').run(step, now)
        .changes === 1
    );
  }

  // Paired phones (deviceStore.ts)

  addDevice(device: PairedDevice, now: number): void {
    this.#devices.add(device, now);
  }

  addDeviceAwaitingConfirmation(device: PairedDevice, now: number, approvedBy: string | undefined): void {
    this.#devices.addAwaitingConfirmation(device, now, approvedBy);
  }

  confirmDevice(device: PairedDevice, now: number): ConfirmOutcome {
    return this.db.transaction(() => this.#devices.confirm(device, now), { immediate: true });
  }

  awaitingDevice(id: string): boolean {
    return this.#devices.isAwaiting(id);
  }

  forgetAwaitingDeviceId(id: string): boolean {
    return this.#devices.forgetAwaitingId(id);
  }

  forgetAwaitingDevice(device: PairedDevice): boolean {
    return this.#devices.forgetAwaiting(device);
  }

  devices(options: { includeRevoked?: boolean } = {}): StoredDevice[] {
    return this.#devices.list(options);
  }

  activeDevice(id: string): PairedDevice | undefined {
    return this.#devices.active(id);
  }

  deviceByCredential(credentialId: string): PairedDevice | undefined {
    return this.#devices.byCredential(credentialId);
  }

  advanceCounter(device: string, counter: number): boolean {
    return this.#devices.advanceCounter(device, counter);
  }

  noteRevokeAsked(id: string, by: string, now: number): void {
    this.#devices.noteRevokeAsked(id, by, now);
  }

  keepDespiteRevokeAsked(id: string): boolean {
    return this.#devices.keepDespiteRevokeAsked(id);
  }

  revokeDevice(id: string, now: number): boolean {
    return this.#devices.revoke(id, now);
  }

  // The daemon's own requests (requestStore.ts)

  saveRequest(record: RequestRecord, now: number): void {
    this.#requests.save(record, now);
  }

  request(requestId: string): RequestRecord | undefined {
    return this.#requests.get(requestId);
  }

  noteRequestApprover(requestId: string, device: string): void {
    this.#requests.noteApprover(requestId, device);
  }

  requestReported(requestId: string): boolean {
    return this.#requests.reported(requestId);
  }

  noteRequestReported(requestId: string, now: number): void {
    this.#requests.noteReported(requestId, now);
  }

  settleRequest(requestId: string, state: Exclude<RequestRecord['state'], 'pending'>): boolean {
    return this.#requests.settle(requestId, state);
  }

  pendingRequestIds(conversation?: string): string[] {
    return this.#requests.pendingIds(conversation);
  }

  deleteRequest(requestId: string): void {
    this.#requests.delete(requestId);
  }

  pruneRequests(before: number): void {
    this.#requests.prune(before);
  }

  capSettledRequests(max: number, now: number): void {
    this.#requests.capSettled(max, now);
  }

  capSettledRequestsWhenDue(max: number, now: number): void {
    this.#requests.capSettledWhenDue(max, now);
  }

  // The kill switch (switchStore.ts)

  switchState(): SwitchState {
    return this.#switch.state();
  }

  applyFreeze(freeze: Parameters<SwitchStore['applyFreeze']>[0], now: number): SwitchState {
    return this.#switch.applyFreeze(freeze, now);
  }

  liftFreeze(now: number): SwitchState {
    return this.#switch.liftFreeze(now);
  }

  endFreeze(id: string, now: number): SwitchState | undefined {
    return this.#switch.endFreeze(id, now);
  }

  freezeEnded(id: string): boolean {
    return this.#switch.freezeEnded(id);
  }

  frozenAt(): number | undefined {
    return this.#switch.frozenAt();
  }

  freezeSignedAt(id: string): number | undefined {
    return this.#switch.freezeSignedAt(id);
  }

  refuseStaleFreeze(id: string, signedAt: number, now: number): void {
    this.#switch.refuseStaleFreeze(id, signedAt, now);
  }

  noteReplay(id: string, now: number): boolean {
    return this.#switch.noteReplay(id, now);
  }

  countResumeVote(freeze: string, device: string, now: number): boolean {
    return this.#switch.countResumeVote(freeze, device, now);
  }

  resumeVoters(freeze: string): string[] {
    return this.#switch.resumeVoters(freeze);
  }

  pruneResumeVotes(before: number): void {
    this.#switch.pruneVotes(before);
  }

  pruneAwaitingDevices(before: number): void {
    this.#devices.pruneAwaiting(before);
  }
}
