/** Freezes and resume votes as phones sign them and the stand-in relay forwards them to a host. */
import { readFileSync } from 'node:fs';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { resumeChallenge } from '../../shared/kill-switch/resumeChallenge.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { auditLines, runLatch, type LatchMachine } from './latchMachine.ts';
import type { StandInRelay } from './standInRelay.ts';

/** Reads and `sleep` are allowed: while a host is frozen, only the kill switch refuses them. */
export const KILL_SWITCH_POLICY = `
default = "ask"
[[rule]]
name = "sleeping is fine"
tool = "exec"
command = "sleep *"
action = "allow"
[[rule]]
name = "reads"
tool = "Read"
action = "allow"
`;

export const fleetOf = (machine: LatchMachine): string =>
  /fleet = "([^"]+)"/.exec(readFileSync(machine.files.config, 'utf8'))![1]!;

/** A phone's signed freeze of this machine's fleet. */
export function signFreeze(machine: LatchMachine, phone: TestPhone, reason = 'prod incident 412') {
  return signEnvelope(
    'freeze',
    { fleet: fleetOf(machine), reason },
    { role: 'device', id: phone.id },
    phone.deviceKeys.privateKey,
  );
}

/** The relay forwards a freeze, under whatever epoch it chooses to announce. */
export function sendFreeze(relay: StandInRelay, envelope: FreezeEnvelope, epoch: number): void {
  relay.send({ v: PROTOCOL_VERSION, type: 'frozen', epoch, envelope, at: Date.now() });
}

/** A phone's vote to end the freeze with this id. */
export async function vote(
  machine: LatchMachine,
  relay: StandInRelay,
  phone: TestPhone,
  freeze: string,
  counter?: number,
): Promise<ResumeVote> {
  const fleet = fleetOf(machine);
  const assertion = await phone.authenticator.assert({
    rpId: '127.0.0.1',
    origin: relay.origin,
    challenge: await resumeChallenge({ fleet, freeze }),
    ...(counter === undefined ? {} : { counter }),
  });
  return { v: PROTOCOL_VERSION, fleet, freeze, device: phone.id, assertion };
}

export function sendVotes(relay: StandInRelay, freeze: string, votes: ResumeVote[]): void {
  relay.send({ v: PROTOCOL_VERSION, type: 'resumed', freeze, votes, at: Date.now() });
}

export const statusCode = async (machine: LatchMachine) => (await runLatch(machine, ['status'])).code;

/** The audit lines of one event, optionally about one freeze. */
export const audited = (machine: LatchMachine, event: string, freeze?: string) =>
  auditLines(machine).filter(
    (line) => line['event'] === event && (freeze === undefined || line['freeze'] === freeze),
  );
