import { afterEach, beforeEach, expect, it } from 'vitest';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import type { CapabilityToken } from '../../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { auditLines, hookInput, startHook, withStore } from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

/**
 * The sign counter of a passkey that counts: the daemon stores the counter of every approval it
 * verifies, so a copy of the passkey, whose counter stands where the original's stood, is refused
 * (https://www.w3.org/TR/webauthn-3/#sctn-sign-counter, step 22 of verifying an assertion).
 */

let paired: PairedDaemon;
beforeEach(async () => {
  paired = await startPairedDaemon();
});
afterEach(() => paired.stop());

const rmCall = () =>
  hookInput('PreToolUse', 'Bash', { command: 'rm -rf build', description: 'Clean the build' });

/** The WebAuthn sign counter a token's assertion carries (authenticatorData bytes 33–36). */
const counterOf = (token: CapabilityToken) =>
  new DataView(fromBase64url(token.assertion.authenticatorData).buffer).getUint32(33);

it('stores the counter of an approval, and refuses a cloned passkey that signs with it again', async () => {
  const { relay, machine, phones } = paired;
  const [phone] = phones;
  const approvedHook = startHook(machine, rmCall());
  const approvedRequest = await relay.nextRequest(0);
  const { token: approval } = await phoneApproves(phone, approvedRequest, relay.origin);
  relay.sendApproval(approvedRequest.requestId, approval);
  expect((await approvedHook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
  const stored = withStore(machine, (store) => store.activeDevice(phone.id)!.credential.counter);
  expect(stored).toBe(counterOf(approval));

  // The clone was copied before that approval: its next assertion reports the same counter.
  const clonedHook = startHook(machine, rmCall());
  const clonedRequest = await relay.nextRequest(1);
  const { token: cloned } = await phoneApproves(phone, clonedRequest, relay.origin, { counter: stored });
  relay.sendApproval(clonedRequest.requestId, cloned);
  await expect
    .poll(() =>
      auditLines(machine).filter(
        (line) => line['event'] === 'token_refused' && line['requestId'] === clonedRequest.requestId,
      ),
    )
    .toEqual([expect.objectContaining({ code: 'counter_not_increased', claimedDevice: phone.id })]);
  // Refused, the request waits on: the relay's expiry ends it, with a deny.
  relay.send({ v: PROTOCOL_VERSION, type: 'expired', requestId: clonedRequest.requestId, at: Date.now() });
  expect((await clonedHook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
  expect(auditLines(machine)).not.toContainEqual(
    expect.objectContaining({ event: 'approved', requestId: clonedRequest.requestId }),
  );
});
