import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadHostIdentity } from '../../daemon/identity/hostIdentity.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import type { ApprovalRequest } from '../../shared/messages/approvals.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import {
  KILL_SWITCH_POLICY,
  fleetOf,
  sendFreeze,
  signFreeze,
  statusCode,
  vote,
} from '../support/killSwitchRelay.ts';
import { auditLines, runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { framesHandled, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import type { StandInRelay } from '../support/standInRelay.ts';

/**
 * What a relay can send again and again, or make up, writes a line of each kind a minute at most,
 * however it varies what it sends: kinds are a small closed set, never the relay's own values or
 * the requests it names.
 */
let paired: PairedDaemon;
let relay: StandInRelay;
let machine: LatchMachine;
let phone: TestPhone;

beforeEach(async () => {
  paired = await startPairedDaemon({ quorum: 1, policy: KILL_SWITCH_POLICY });
  ({ relay, machine } = paired);
  [phone] = paired.phones;
});
afterEach(() => paired.stop());

const linesOf = (event: string) => auditLines(machine).filter((line) => line['event'] === event).length;

async function frozenByPhone(): Promise<string> {
  const envelope = await signFreeze(machine, phone, 'incident');
  sendFreeze(relay, envelope, 1);
  await expect.poll(() => statusCode(machine)).toBe(1);
  return freezeId(envelope);
}

describe('audit lines a relay can cause', () => {
  it('frames it cannot read: one line for 200, in the daemon’s log', async () => {
    const malformedLines = () => paired.daemon.output().match(/malformed frame/g)?.length ?? 0;
    for (let i = 0; i < 200; i++)
      relay.sendText(i % 2 ? `{"v":1,"seq":${i}` : JSON.stringify({ v: 99, seq: i }));
    await framesHandled(machine, relay);
    await expect.poll(malformedLines).toBeGreaterThan(0);
    await framesHandled(machine, relay); // what the daemon wrote before has reached this side
    expect(malformedLines()).toBe(1);
    expect(paired.daemon.output()).toMatch(/ignored a malformed frame from the relay \(\w+\)/);
  });

  it('refused votes: a few lines for 200 frames, however the refused list varies', async () => {
    const freeze = await frozenByPhone();
    // A genuine vote relabelled for another freeze, and as another phone's.
    const stale: ResumeVote = { ...(await vote(machine, relay, phone, freeze)), freeze: 'A'.repeat(43) };
    const unpaired: ResumeVote = { ...stale, device: 'nobody-paired' };
    const before = linesOf('resume_refused');
    for (let frame = 1; frame <= 200; frame++) {
      // Each frame's list spells its number in binary: every list another.
      const votes: ResumeVote[] = [];
      for (let bit = frame; bit > 0; bit >>= 1) votes.push(bit & 1 ? stale : unpaired);
      relay.send({ v: PROTOCOL_VERSION, type: 'resumed', freeze, votes, at: Date.now() });
    }
    await framesHandled(machine, relay);
    expect(linesOf('resume_refused') - before).toBeLessThanOrEqual(2);
  });

  it('a phone’s revoke of a rule, replayed: one line, when it ends nothing', async () => {
    const { id: host } = await loadHostIdentity(machine.files.hostKey);
    const envelope = await signEnvelope(
      'revoke-grant',
      { fleet: fleetOf(machine), host, requestId: 'some-request' },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
    );
    for (let frame = 0; frame < 100; frame++)
      relay.send({ v: PROTOCOL_VERSION, type: 'grant_revoked', envelope, at: Date.now() });
    await framesHandled(machine, relay);
    expect(linesOf('grant_revoked')).toBe(1);
  });

  it('a phone’s freeze dated too far ahead, replayed while frozen: one line', async () => {
    await frozenByPhone();
    const ahead = await signEnvelope(
      'freeze',
      { fleet: fleetOf(machine), reason: 'ahead' },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
      Date.now() + 10 * 60_000,
    );
    const before = linesOf('freeze_ignored');
    for (let frame = 0; frame < 100; frame++) sendFreeze(relay, ahead, 2);
    await framesHandled(machine, relay);
    expect(linesOf('freeze_ignored') - before).toBe(1);
  });

  it('made-up answers naming each request this host keeps: lines by kind, not by request', async () => {
    const requests: ApprovalRequest[] = [];
    for (let n = 0; n < 10; n++) {
      const asking = runLatch(machine, ['request', '--title', `deploy ${n}`, '--timeout', '60']);
      const request = await relay.nextRequest(n);
      requests.push(request);
      relay.send({ v: PROTOCOL_VERSION, type: 'expired', requestId: request.requestId, at: Date.now() });
      await asking;
    }
    await framesHandled(machine, relay);
    const before = auditLines(machine).length;
    const forger = await createPhone('Relay’s own key');
    const { token: genuine } = await phoneApproves(phone, requests[0]!, relay.origin);
    for (const { fleet, host, requestId } of requests.slice(1)) {
      relay.sendApproval(requestId, { ...genuine, requestId });
      relay.sendApproval(requestId, {
        ...genuine,
        requestId,
        assertion: { ...genuine.assertion, credentialId: 'AAAA' },
      });
      relay.sendApproval(requestId, { ...genuine, requestId, grant: 'half_hour' });
      const envelope = await signEnvelope(
        'deny',
        { fleet, host, requestId, report: { scope: 'fleet' } },
        { role: 'device', id: phone.id },
        forger.deviceKeys.privateKey,
      );
      relay.send({ v: PROTOCOL_VERSION, type: 'denied', requestId, envelope, at: Date.now() });
    }
    await framesHandled(machine, relay);
    // 36 made-up frames, four kinds of refusal (and the deny refused for a request no longer waiting).
    expect(auditLines(machine).length - before).toBeLessThanOrEqual(6);
  });
});
