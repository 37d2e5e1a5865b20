import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { auditLines, hookInput, startHook, type LatchMachine } from '../support/latchMachine.ts';
import { framesHandled, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import type { StandInRelay } from '../support/standInRelay.ts';

/**
 * The real daemon against a relay whose clock is 5 minutes off (docs/security.md#clocks): the
 * stand-in relay sends its frames when and with the times the test says, as such a relay would.
 * The relay's own side of the skew is in tests/relay/clockSkew.test.ts.
 */
const SKEW_MS = 5 * 60_000;

let paired: PairedDaemon;
let relay: StandInRelay;
let machine: LatchMachine;
let phone: TestPhone;

beforeAll(async () => {
  // The shortest deadline the config takes, so that waiting it out is quick.
  paired = await startPairedDaemon({
    config: (text) => text.replace('timeout_seconds = 300', 'timeout_seconds = 5'),
  });
  ({ relay, machine } = paired);
  [phone] = paired.phones;
});
afterAll(() => paired.stop());

const rmCall = () => hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' });

describe('clock skew between host, relay and phone', () => {
  for (const [name, skew] of [
    ['ahead', SKEW_MS],
    ['behind', -SKEW_MS],
  ] as const) {
    it(`takes a fresh approval from a relay 5 minutes ${name}: only the host’s clock times it`, async () => {
      const before = relay.requests.length;
      const hook = startHook(machine, rmCall());
      const request = await relay.nextRequest(before);
      const { token } = await phoneApproves(phone, request, relay.origin);
      relay.send({
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId: request.requestId,
        token,
        at: Date.now() + skew,
      });
      expect((await hook).output).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'allow',
          permissionDecisionReason: 'latch: approved on Test phone',
        },
      });
    });
  }

  it('never allows an approval after the host’s deadline, though a relay 5 minutes behind still took it', async () => {
    const before = relay.requests.length;
    const hook = startHook(machine, rmCall());
    const request = await relay.nextRequest(before);
    // The phone signs while the request is open; the relay, 5 minutes behind, holds it open past
    // the host's deadline and hands the approval over only then.
    const { token } = await phoneApproves(phone, request, relay.origin);
    expect((await hook).output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'latch: expired: no phone answered before the deadline',
      },
    });
    // Past the deadline by this host's clock too (a timer may fire a millisecond early).
    await expect.poll(() => Date.now()).toBeGreaterThan(request.exp);
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'approved',
      requestId: request.requestId,
      token,
      at: Date.now() - SKEW_MS,
    });
    await framesHandled(machine, relay);
    const lines = auditLines(machine).filter((line) => line['requestId'] === request.requestId);
    expect(lines).toContainEqual(
      expect.objectContaining({ event: 'token_refused', code: 'expired', claimedDevice: phone.id }),
    );
    expect(lines.map((line) => line['event'])).not.toContain('approved');
  });
});
