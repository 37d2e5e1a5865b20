import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach } from 'vitest';
import { AuditLog } from '../../daemon/audit/auditLog.ts';
import { KillSwitch } from '../../daemon/kill-switch/killSwitch.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';
import type { SwitchState } from '../../daemon/state/switchStore.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { generateSigningKeyPair } from '../../shared/keys/p256.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { resumeChallenge } from '../../shared/kill-switch/resumeChallenge.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { NOW, pairedFleet, type PairedFleet } from '../../scripts/lib/approvalFixture.ts';
import { TEST_ORIGIN, TEST_RP_ID } from '../../scripts/lib/softwarePhone.ts';

/**
 * The host's kill switch with its real state database and audit log, in this process: the
 * daemon's tests (freezeOnHost, freezeReplay) drive it through dist/, which mutation testing
 * (npm run mutate) cannot reach.
 */
export interface InProcessKillSwitch {
  fleet: PairedFleet;
  store: StateStore;
  /** Where the state database is, for another connection to it (`latch panic`'s). */
  statePath: string;
  killSwitch: KillSwitch;
  /** Every state the kill switch told its listener, in order. */
  changes: SwitchState[];
  /** What the kill switch asks at each count: 1 unless a test sets it. */
  quorum: number;
  auditEvents(): Record<string, unknown>[];
  /** The paired phone's freeze, or one for another fleet or signed with another key. */
  phoneFreeze(
    reason: string,
    overrides?: { fleet?: string; key?: CryptoKey; signedAt?: number },
  ): Promise<FreezeEnvelope>;
  /** The paired phone's vote to end the freeze with this id. */
  vote(freeze: string): Promise<ResumeVote>;
  /** The relay's view, as a frame brings it: only what the host reads is given. */
  relayState(view: Pick<FleetState, 'frozen' | 'freeze' | 'reason'>): FleetState;
  /** Applies the freeze as the relay brings it; its id. */
  frozenBy(envelope: FreezeEnvelope): Promise<string>;
}

/** A fresh fleet, state database and kill switch before each test, so no test sees another's. */
export function inProcessKillSwitchForEachTest(): InProcessKillSwitch {
  let auditPath = '';
  const rig = { quorum: 1 } as InProcessKillSwitch;
  Object.assign(rig, {
    auditEvents: () =>
      readFileSync(auditPath, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    phoneFreeze: (reason, overrides = {}) =>
      signEnvelope(
        'freeze',
        { fleet: overrides.fleet ?? rig.fleet.fleet, reason },
        { role: 'device', id: rig.fleet.phone.id },
        overrides.key ?? rig.fleet.phone.deviceKeys.privateKey,
        overrides.signedAt,
      ),
    vote: async (freeze) => {
      const { fleet, phone } = rig.fleet;
      const assertion = await phone.authenticator.assert({
        rpId: TEST_RP_ID,
        origin: TEST_ORIGIN,
        challenge: await resumeChallenge({ fleet, freeze }),
      });
      return { v: PROTOCOL_VERSION, fleet, freeze, device: phone.id, assertion };
    },
    relayState: (view) => ({
      v: PROTOCOL_VERSION,
      fleet: rig.fleet.fleet,
      epoch: 7,
      votes: [],
      needed: 1,
      ...view,
    }),
    frozenBy: async (envelope) => {
      await rig.killSwitch.applyFreeze(envelope, 'relay');
      return freezeId(envelope);
    },
  } satisfies Omit<
    InProcessKillSwitch,
    'fleet' | 'store' | 'statePath' | 'killSwitch' | 'changes' | 'quorum'
  >);
  beforeEach(async () => {
    rig.fleet = await pairedFleet();
    const directory = mkdtempSync(join(tmpdir(), 'latch-kill-switch-'));
    rig.statePath = join(directory, 'state.db');
    rig.store = new StateStore(rig.statePath);
    rig.store.addDevice(rig.fleet.device, NOW);
    auditPath = join(directory, 'audit.log');
    rig.quorum = 1;
    rig.killSwitch = new KillSwitch({
      store: rig.store,
      audit: new AuditLog(auditPath, rig.store, { redactContent: false }),
      host: {
        id: rig.fleet.host.id,
        publicKey: rig.fleet.host.hostKey,
        privateKey: rig.fleet.host.hostKeys.privateKey,
      },
      fleet: rig.fleet.fleet,
      quorum: () => rig.quorum,
      relying: { origins: [TEST_ORIGIN], rpId: TEST_RP_ID },
    });
    rig.changes = [];
    rig.killSwitch.onChange((state) => rig.changes.push(state));
    return () => rig.store.close();
  });
  return rig;
}

/** A signing key no paired phone or host has. */
export async function otherKey(): Promise<CryptoKey> {
  return (await generateSigningKeyPair(false)).privateKey;
}
