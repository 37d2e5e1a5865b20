import { describe, expect, it, onTestFinished } from 'vitest';
import { startFaultRig, type FaultRig } from '../support/faultRig.ts';
import { hookInput, startHook } from '../support/latchMachine.ts';
import { decideAtRelay, decidePendingAtRelay, openAtRelay, tokenFor } from '../support/phoneAtRelay.ts';

/**
 * The relay killed (SIGKILL to wrangler and workerd) while a call waits for the phone, then
 * started again on the same persisted state, with real processes. A process restart is the
 * harshest eviction of the fleet's Durable Object: its memory, its sockets and its timers are
 * gone, only its SQLite storage stays. (The eviction of the object alone, the relay process
 * running on, is tests/relay/persistence.test.ts, in workerd.)
 */

const POLICY = `
default = "ask"
[[rule]]
name = "expires while the relay is down"
tool = "Bash"
command = "rm -rf short-*"
action = "ask"
risk = "low"
timeout_seconds = 8
[[rule]]
name = "shell"
tool = "Bash"
action = "ask"
risk = "low"
`;

async function rig(): Promise<FaultRig> {
  const started = await startFaultRig({ name: 'relay-restart', policy: POLICY });
  onTestFinished(() => started.stop());
  return started;
}

const bash = (command: string) => hookInput('PreToolUse', 'Bash', { command });

describe('the relay killed while a call waits', () => {
  it('started again on its state: the daemon reconnects and the phone’s approval still unblocks the call', async () => {
    const { machine, driver, phone, fleet, ...host } = await rig();
    const waiting = startHook(machine, bash('rm -rf node_modules'));
    await expect.poll(host.pendingAtRelay).toHaveLength(1);

    await host.killRelay();
    await expect.poll(async () => (await host.status()).relay).toBe('disconnected');
    await host.startRelayAgain();
    await expect.poll(async () => (await host.status()).relay).toBe('connected');
    await decidePendingAtRelay(driver, phone, fleet, (details) => details.title.includes('node_modules'));

    expect((await waiting).output?.['hookSpecificOutput']).toMatchObject({
      permissionDecision: 'allow',
      permissionDecisionReason: 'latch: approved on Software phone',
    });
  });

  it('kept down past the call’s deadline: the call is denied at its timeout, never hangs, and nothing approves it later', async () => {
    const { machine, driver, phone, fleet, ...host } = await rig();
    const waiting = startHook(machine, bash('rm -rf short-lived'));
    await expect.poll(host.pendingAtRelay).toHaveLength(1);
    const [requestId] = (await host.pendingAtRelay()) as [string];
    const { details } = await openAtRelay(driver, phone, fleet, requestId);

    await host.killRelay();
    expect((await waiting).output?.['hookSpecificOutput']).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/^latch: expired: /),
    });
    expect(host.recordOf(requestId)).toBe('expired');

    await host.startRelayAgain();
    await expect.poll(async () => (await host.status()).relay).toBe('connected');
    // The relay, back, expires the request past its deadline, and refuses the phone's approval.
    await expect
      .poll(async () => (await openAtRelay(driver, phone, fleet, requestId)).view.state)
      .toBe('expired');
    const late = await decideAtRelay(driver, phone, await tokenFor(driver, phone, details));
    expect({ status: late.status, body: late.body }).toMatchObject({
      status: 409,
      body: { error: { code: 'already_decided' } },
    });
    expect(host.audited('approved', requestId)).toEqual([]);
  });
});
