import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { createPhone } from '../../scripts/lib/softwarePhone.ts';
import { StandInRelay } from '../support/standInRelay.ts';
import {
  auditLines,
  hookInput,
  pairPhoneDirectly,
  startDaemon,
  startHook,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { framesHandled, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

let relay: StandInRelay;
let machine: LatchMachine;
let daemon: RunningDaemon;
let phone: TestPhone;
let paired: PairedDaemon;

beforeAll(async () => {
  paired = await startPairedDaemon({
    config: (text) => text.replace('timeout_seconds = 300', 'timeout_seconds = 8'),
  });
  ({ relay, machine, daemon } = paired);
  [phone] = paired.phones;
});

// The daemon a test restarted, then the rest of the set-up.
afterAll(async () => {
  await daemon.stop();
  await paired.stop();
});

const rmCall = () =>
  hookInput('PreToolUse', 'Bash', { command: 'rm -rf build', description: 'Clean the build' });

describe('the daemon verifies every decision itself', () => {
  it('allows a call once a paired phone’s token for exactly this request verifies', async () => {
    const hook = startHook(machine, rmCall());
    const request = await relay.nextRequest();
    const { token, details } = await phoneApproves(phone, request, relay.origin);
    expect(details.detail).toBe('rm -rf build');
    relay.sendApproval(request.requestId, token);
    const { output } = await hook;
    expect(output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'latch: approved on Test phone',
      },
    });
  });

  it('refuses a decision forged by the relay with an unpaired key, and says why in the audit log', async () => {
    const before = relay.requests.length;
    const hook = startHook(machine, rmCall());
    const request = await relay.nextRequest(before);
    // The stand-in relay has a passkey of its own and signs a perfect assertion with it.
    const impostor = await createPhone('Relay’s own key');
    const { token } = await phoneApproves(
      { ...impostor, ecdhKeys: phone.ecdhKeys, ecdhKeyRaw: phone.ecdhKeyRaw, id: phone.id },
      request,
      relay.origin,
    );
    relay.sendApproval(request.requestId, { ...token, device: phone.id });
    const { output } = await hook;
    expect(output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(JSON.stringify(output)).toContain('expired');
    // The phone it names is the relay's claim, and the line says so.
    const refused = auditLines(machine).filter(
      (line) => line['event'] === 'token_refused' && line['requestId'] === request.requestId,
    );
    expect(refused).toEqual([
      expect.objectContaining({ code: 'unknown_credential', claimedDevice: phone.id }),
    ]);
    expect(refused[0]).not.toHaveProperty('device');
  });

  it('refuses a genuine token issued for another request', async () => {
    const first = relay.requests.length;
    const hookA = startHook(machine, rmCall());
    const requestA = await relay.nextRequest(first);
    const hookB = startHook(
      machine,
      hookInput('PreToolUse', 'Bash', { command: 'git push --force origin main' }),
    );
    const requestB = await relay.nextRequest(first + 1);
    // The phone approved A; a lying relay presents that approval as B's.
    const { token } = await phoneApproves(phone, requestA, relay.origin);
    relay.sendApproval(requestB.requestId, { ...token, requestId: requestB.requestId });
    relay.sendApproval(requestA.requestId, token);
    expect((await hookA).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    expect((await hookB).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'token_refused',
        requestId: requestB.requestId,
        code: 'challenge_mismatch',
      }),
    );
  });

  it('refuses a genuine approval whose unsigned members the relay rewrote (a deny, another host or fleet), before its signature is checked', async () => {
    const before = relay.requests.length;
    const hook = startHook(machine, hookInput('PreToolUse', 'Bash', { command: 'rm -rf dist' }));
    const request = await relay.nextRequest(before);
    const { token } = await phoneApproves(phone, request, relay.origin);
    relay.sendApproval(request.requestId, { ...token, decision: 'deny' });
    relay.sendApproval(request.requestId, { ...token, host: 'another-host' });
    relay.sendApproval(request.requestId, { ...token, fleet: 'another-fleet' });
    await framesHandled(machine, relay);
    const lines = auditLines(machine).filter((line) => line['requestId'] === request.requestId);
    expect(lines.map((line) => line['event'])).not.toContain('approved');
    expect(lines).toContainEqual(expect.objectContaining({ event: 'token_refused', code: 'invalid_field' }));
    expect(lines).toContainEqual(
      expect.objectContaining({ event: 'token_refused', code: 'context_mismatch' }),
    );
    // None of them used the approval up: the token as the phone made it still approves.
    relay.sendApproval(request.requestId, token);
    expect((await hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
  });

  it('refuses a token replayed after a daemon restart', async () => {
    // A synced passkey reports counter 0 every time, so only the single-use store can catch this.
    const { phone: syncedPhone } = await pairPhoneDirectly(machine, relay.origin, {
      counter: 'zero',
      name: 'Synced phone',
    });
    const before = relay.requests.length;
    const hook = startHook(machine, rmCall());
    const request = await relay.nextRequest(before);
    const { token } = await phoneApproves(syncedPhone, request, relay.origin);
    relay.sendApproval(request.requestId, token);
    expect((await hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });

    await daemon.stop();
    daemon = await startDaemon(machine);
    await relay.waitFor(() => relay.connected > 0);
    relay.sendApproval(request.requestId, token);
    await expect
      .poll(() =>
        auditLines(machine).filter(
          (line) => line['event'] === 'token_refused' && line['requestId'] === request.requestId,
        ),
      )
      .toEqual([expect.objectContaining({ code: 'already_used' })]);
  });

  it('ignores, and logs once a minute, decisions for requests this host never sent', async () => {
    const before = relay.requests.length;
    const hook = startHook(machine, rmCall());
    const request = await relay.nextRequest(before);
    const { token } = await phoneApproves(phone, request, relay.origin);
    // As many as a relay likes: one line, so that they cannot rotate the real history away.
    for (let sent = 0; sent < 50; sent++)
      relay.sendApproval(`never-sent-${sent}`, { ...token, requestId: `never-sent-${sent}` });
    // The request it did send still waits for its own answer, which comes after them all.
    await relay.sendDenial(phone, request);
    expect((await hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    expect(
      auditLines(machine).filter(
        (line) => line['event'] === 'token_refused' && String(line['requestId']).startsWith('never-sent'),
      ),
    ).toEqual([expect.objectContaining({ requestId: 'never-sent-0', code: 'unknown_request' })]);
  });

  it('honours a phone’s signed deny from the relay, and logs it as verified', async () => {
    const before = relay.requests.length;
    const hook = startHook(machine, rmCall());
    const request = await relay.nextRequest(before);
    await relay.sendDenial(phone, request);
    expect((await hook).output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'latch: denied on Test phone',
      },
    });
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'denied',
        requestId: request.requestId,
        verified: true,
        device: phone.id,
      }),
    );
  });

  it('honours an expiry from the relay', async () => {
    const before = relay.requests.length;
    const hook = startHook(machine, rmCall());
    const request = await relay.nextRequest(before);
    relay.send({ v: PROTOCOL_VERSION, type: 'expired', requestId: request.requestId, at: Date.now() });
    expect((await hook).output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'latch: expired: no phone answered before the deadline',
      },
    });
    // The relay's word, before this host's own deadline: the daemon's timer did not answer this.
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'expired',
        requestId: request.requestId,
        early: true,
        verified: false,
      }),
    );
  });
});
