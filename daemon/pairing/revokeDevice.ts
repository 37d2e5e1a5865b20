import { revokeChallenge } from '../../shared/device-auth/revokeChallenge.ts';
import { LatchError } from '../../shared/errors.ts';
import type { HostEvent } from '../../shared/messages/events.ts';
import { verifyAssertion, type RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import { RelayNoise } from '../audit/relayNoise.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import { GrantStore } from '../grants/grantStore.ts';
import type { StateStore } from '../state/stateStore.ts';

/** Who ended the trust: `latch devices --revoke` here, or a paired phone in the app. */
export type RevokedBy = { by: 'host' } | { by: 'phone'; phone: string };

/**
 * Ends this host's trust in a phone and every rule it allowed, in one transaction: a lost phone's
 * "calls like this" would otherwise go on running. False when no trusted phone has that id.
 */
export function revokeDevice(
  store: StateStore,
  audit: AuditLog,
  device: string,
  revokedBy: RevokedBy,
): boolean {
  const now = Date.now();
  const grants = store.db.transaction(() =>
    store.revokeDevice(device, now) ? new GrantStore(store.db).revoke({ device }, now) : undefined,
  );
  if (!grants) return false;
  audit.append({ event: 'device_revoked', device, ...revokedBy });
  if (grants.length > 0) audit.append({ event: 'grant_revoked', grants, device, ...revokedBy });
  return true;
}

type DeviceRevokedEvent = Extract<HostEvent, { type: 'device_revoked' }>;

/**
 * A phone revoked in the app. The relay passes on the assertion the revoking phone made with
 * Face ID over revokeChallenge, and this host checks it against its own record of that phone's
 * passkey: unlike a deny, a revoke here lasts, and taken on the relay's word it could leave the
 * host without the phones its quorum needs. The counter is not held to have moved: a revoke can
 * reach a host after approvals made later (a host offline meanwhile), and it is worth nothing
 * twice (the phone is revoked already; a revoked id never pairs again, here or at the relay).
 * One that does not verify ends only the rules the phone allowed.
 */
export class RevokesFromApp {
  readonly #options: { store: StateStore; audit: AuditLog; fleet: string; relying: RelyingParty };
  readonly #noise: RelayNoise;

  constructor(options: { store: StateStore; audit: AuditLog; fleet: string; relying: RelyingParty }) {
    this.#options = options;
    this.#noise = new RelayNoise(options.audit);
  }

  async onDeviceRevoked({ device, by, assertion }: DeviceRevokedEvent): Promise<void> {
    const { store, audit, fleet, relying } = this.#options;
    // One approved here and awaiting `latch pair`'s confirmation is ended too: it must not become
    // trusted after a revoke that came first.
    const awaiting = !store.activeDevice(device) && store.awaitingDevice(device);
    // Not paired with this host, or revoked here already: nothing to end.
    if (!store.activeDevice(device) && !awaiting) return;
    const revoker = store.activeDevice(by)?.credential;
    try {
      await verifyAssertion(
        assertion,
        { challenge: await revokeChallenge({ fleet, device }), ...relying },
        revoker && { ...revoker, counter: 0 },
      );
    } catch (error) {
      if (!(error instanceof LatchError)) throw error;
      // Keyed by phone and code: only phones trusted here get this far, so the kinds are few.
      this.#noise.append(`device_revoke_refused:${device}:${error.code}`, {
        event: 'device_revoke_refused',
        device,
        phone: by,
        code: error.code,
      });
      const now = Date.now();
      // One not trusted yet is not trusted at all: forgotten, not revoked (a relay's word alone
      // must not keep it out for good), its pairing is to be made again.
      if (awaiting) {
        if (store.forgetAwaitingDeviceId(device))
          audit.append({ event: 'pairing_refused', device, code: 'revoke_unverified', forgotten: true });
        return;
      }
      // Its rules end all the same: ending a rule only tightens, as an unverified grant revoke
      // does (grants/revokeFromPhone). Each ends once, so the lines a relay can cause are few.
      const grants = new GrantStore(store.db).revoke({ device }, now);
      if (grants.length > 0)
        audit.append({ event: 'grant_revoked', grants, device, by: 'phone', phone: by, verified: false });
      // A phone paired with other hosts only: the person's revoke as likely as the relay's. Its
      // trust stays, as a relay must not take a host below its quorum; `latch devices` says so.
      if (!revoker) store.noteRevokeAsked(device, by, now);
      return;
    }
    revokeDevice(store, audit, device, { by: 'phone', phone: by });
  }
}
