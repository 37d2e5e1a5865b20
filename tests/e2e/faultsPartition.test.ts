import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startFaultRig, type FaultRig } from '../support/faultRig.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { hookInput, startHook } from '../support/latchMachine.ts';
import { decideAtRelay, openAtRelay, tokenFor } from '../support/phoneAtRelay.ts';
import { isHeld, killAll, processesRunning } from '../support/processes.ts';

/**
 * A partition between the daemon and the relay, then healed, with real processes: the relay, the
 * daemon behind a proxy the test cuts (PartitionProxy), a phone beside it. A partition of minutes
 * runs the same code as one of seconds: the daemon's calls fail at once, its WebSocket closes,
 * and it redials with backoff capped at 10 s, so any length past that cap is the same loop of
 * failed redials; strict mode counts the time against `grace_seconds`, which is 2 s here instead
 * of 120 s; and a request whose deadline falls inside the partition is one with a short timeout.
 */

const POLICY = `
default = "ask"
[[rule]]
name = "reads"
tool = "Read"
action = "allow"
[[rule]]
name = "sleeping is fine"
tool = "exec"
command = "sleep *"
action = "allow"
[[rule]]
name = "expires inside the partition"
tool = "Bash"
command = "rm -rf short-*"
action = "ask"
risk = "low"
timeout_seconds = 10
[[rule]]
name = "shell"
tool = "Bash"
action = "ask"
risk = "low"
`;

const strictly = (text: string) =>
  text.replace('strict = false', 'strict = true').replace('grace_seconds = 120', 'grace_seconds = 2');

async function rig(config?: (text: string) => string): Promise<FaultRig> {
  const started = await startFaultRig({ name: 'partition', policy: POLICY, ...(config ? { config } : {}) });
  onTestFinished(() => started.stop());
  return started;
}

const bash = (command: string) => hookInput('PreToolUse', 'Bash', { command });
const read = () => hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' });

/** Claude Code's answer to one call: the decision, and its reason. */
async function hookAnswer(machine: FaultRig['machine'], input: string) {
  const { output, stderr } = await startHook(machine, input);
  if (!output) throw new Error(`the hook answered nothing: ${stderr}`);
  const { permissionDecision, permissionDecisionReason } = output['hookSpecificOutput'] as Record<
    string,
    string
  >;
  return { decision: permissionDecision, reason: permissionDecisionReason };
}

/** `latch exec -- sleep <unique>`, allowed by the policy: resolves with the sleeper's pid. */
async function sleeperUnderExec(machine: FaultRig['machine']): Promise<number> {
  const seconds = `1000.${randomInt(1e9)}`;
  const exec = spawn(process.execPath, [LATCH_BIN, 'exec', '--', 'sleep', seconds], {
    env: machine.env,
    stdio: 'ignore',
  });
  onTestFinished(() => {
    exec.kill('SIGKILL');
    killAll(processesRunning('sleep', seconds));
  });
  await expect.poll(() => processesRunning('sleep', seconds)).toHaveLength(1);
  return processesRunning('sleep', seconds)[0]!;
}

describe('a partition between the daemon and the relay', () => {
  it('not strict: a call for the phone is denied with relay_unreachable, policy allows pass, nothing hangs; healed, it catches up and allows nothing late', async () => {
    const { machine, proxy, driver, phone, fleet, ...host } = await rig();
    const shortLived = startHook(machine, bash('rm -rf short-lived'));
    await expect.poll(host.pendingAtRelay).toHaveLength(1);
    const [requestId] = (await host.pendingAtRelay()) as [string];
    const { details } = await openAtRelay(driver, phone, fleet, requestId);

    proxy.cut();
    await expect.poll(async () => (await host.status()).relay).toBe('disconnected');
    // The phone approves in time, but the relay cannot tell a host it cannot reach.
    expect((await decideAtRelay(driver, phone, await tokenFor(driver, phone, details))).status).toBe(200);
    expect(await hookAnswer(machine, bash('rm -rf cache'))).toEqual({
      decision: 'deny',
      reason: expect.stringMatching(/^latch: relay_unreachable: /),
    });
    expect(await hookAnswer(machine, read())).toMatchObject({ decision: 'allow' });
    // The waiting call ends at its own deadline, the approval unheard: a deny, never a hang.
    expect((await shortLived).output?.['hookSpecificOutput']).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/^latch: expired: /),
    });
    await host.freezeFromPhone('frozen during the partition');
    expect(await host.status()).toMatchObject({ state: 'armed', relay: 'disconnected' });
    expect(proxy.refused).toBeGreaterThan(0); // the daemon kept trying

    proxy.heal();
    // Back on the relay, the daemon replays what it missed: the freeze applies...
    await expect.poll(async () => (await host.status()).state).toBe('frozen');
    expect(await hookAnswer(machine, read())).toEqual({
      decision: 'deny',
      reason: expect.stringMatching(/^latch: kill_switch: /),
    });
    // ...and the approval of the request that expired meanwhile is refused: nothing runs late.
    await expect.poll(() => host.audited('token_refused', requestId)).toHaveLength(1);
    expect(host.audited('token_refused', requestId)[0]).toMatchObject({ code: 'expired' });
    expect(host.audited('approved', requestId)).toEqual([]);
    expect(host.recordOf(requestId)).toBe('expired');
  });

  it('strict: after grace_seconds the host freezes and latch exec stops its command; healed, with the fleet not frozen, it resumes', async () => {
    const { machine, proxy, ...host } = await rig(strictly);
    const sleeper = await sleeperUnderExec(machine);

    proxy.cut();
    await expect.poll(async () => (await host.status()).state).toBe('frozen');
    expect(host.audited('freeze').at(-1)).toMatchObject({ cause: 'unreachable' });
    await expect.poll(() => isHeld(sleeper)).toBe(true);
    expect(await hookAnswer(machine, read())).toEqual({
      decision: 'deny',
      reason: expect.stringMatching(/^latch: kill_switch: /),
    });

    proxy.heal();
    await expect.poll(async () => (await host.status()).state).toBe('armed');
    expect(host.audited('resume').at(-1)).toMatchObject({ via: 'relay reachable again (strict mode)' });
    await expect.poll(() => isHeld(sleeper)).toBe(false);
    expect(await hookAnswer(machine, read())).toMatchObject({ decision: 'allow' });
  });

  it('strict, a silent partition (no reset ever comes): the unanswered keep-alive drops the connection and the host freezes after grace_seconds; healed, it resumes', async () => {
    const { machine, proxy, ...host } = await rig(strictly);
    proxy.cut('silent');
    await expect.poll(async () => (await host.status()).relay).toBe('disconnected');
    await expect.poll(async () => (await host.status()).state).toBe('frozen');
    expect(host.audited('freeze').at(-1)).toMatchObject({ cause: 'unreachable' });
    expect(await hookAnswer(machine, read())).toEqual({
      decision: 'deny',
      reason: expect.stringMatching(/^latch: kill_switch: /),
    });

    proxy.heal();
    await expect.poll(async () => (await host.status()).state).toBe('armed');
    expect(await hookAnswer(machine, read())).toMatchObject({ decision: 'allow' });
  });

  it('strict: healed while the fleet was frozen from a phone during the partition, the host stays frozen', async () => {
    const { machine, proxy, ...host } = await rig(strictly);
    const sleeper = await sleeperUnderExec(machine);

    proxy.cut();
    await expect.poll(async () => (await host.status()).state).toBe('frozen');
    await host.freezeFromPhone('frozen from the phone during the partition');

    proxy.heal();
    // Back on the relay, the signed freeze takes over from the strict one: no vote, no resume.
    await expect.poll(() => host.audited('freeze').at(-1)).toMatchObject({ cause: 'relay', verified: true });
    expect(host.audited('resume')).toEqual([]);
    expect(await host.status()).toMatchObject({ state: 'frozen', relay: 'connected' });
    expect(isHeld(sleeper)).toBe(true);
    expect(await hookAnswer(machine, read())).toEqual({
      decision: 'deny',
      reason: expect.stringMatching(/^latch: kill_switch: /),
    });
  });
});
