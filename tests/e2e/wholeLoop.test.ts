import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { CapabilityToken } from '../../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { holdPanic, approvePending, openPending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { HostileProxy } from '../support/hostileProxy.ts';
import { auditLines, runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { createPhone } from '../../scripts/lib/softwarePhone.ts';
import { isHeld, killAll } from '../support/processes.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';

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
name = "root"
tool = "Bash"
command = "rm -rf /*"
action = "ask"
timeout_seconds = 8
[[rule]]
name = "destructive"
tool = "Bash"
command = "rm *"
action = "ask"
risk = "medium"
`;

let rig: PhoneRig;
let proxy: HostileProxy;
let origin: string;
let pushService: PushServiceClient;
let machine: LatchMachine;
let a: PairedBrowserPhone;
let b: PairedBrowserPhone;
/** Every command an agent asked about in this suite: none may be found in the relay's storage. */
const commands: string[] = [];

beforeAll(async () => {
  // Everyone, daemon and phones, reaches the relay through the proxy: it can lie to both.
  rig = await startPhoneRig({
    name: 'e2e-relay',
    relay: 'plain',
    hostileProxy: true,
    quorum: 2,
    policy: POLICY,
  });
  ({ origin, pushService, machine } = rig);
  proxy = rig.proxy!;
}, 120_000);

afterAll(async () => {
  await rig?.stop();
});

type HookAnswer = { permissionDecision: string; permissionDecisionReason: string };

function hook(tool: string, toolInput: Record<string, unknown>): Promise<HookAnswer> {
  if (typeof toolInput['command'] === 'string') commands.push(toolInput['command']);
  const input = JSON.stringify({
    session_id: 'e2e',
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: toolInput,
    cwd: '/srv/app',
    tool_use_id: `t-${Math.random()}`,
  });
  return runLatch(machine, ['hook', 'claude-code'], { input, timeoutMs: 120_000 }).then(
    (ran) => JSON.parse(ran.stdout).hookSpecificOutput as HookAnswer,
  );
}

const approveOn = (phone: PairedBrowserPhone, title: RegExp) => approvePending(phone.browser, origin, title);

async function denyOn(phone: PairedBrowserPhone, title: RegExp): Promise<void> {
  await openPending(phone.browser, origin, title);
  await phone.browser.page.getByRole('button', { name: 'Deny', exact: true }).click();
  await phone.browser.page.getByRole('status').getByText('Denied').waitFor();
}

const refusals = (requestId: string) =>
  auditLines(machine).filter((line) => line['event'] === 'token_refused' && line['requestId'] === requestId);
const latestRequestId = () => proxy.requests.at(-1)!.requestId;

describe('the whole loop, every part real', () => {
  it('pairs two phones, through the relay behind the proxy', async () => {
    a = await rig.pairPhone('Phone A');
    // Phone A, already trusted, approves adding phone B.
    b = await rig.pairPhone('Phone B');
  });

  it('approve: a PreToolUse Bash call for rm -rf build is pushed, approved on the phone, and allowed', async () => {
    const pushes = (await pushService.messages(a.pushId)).length;
    const answer = hook('Bash', { command: 'rm -rf build' });
    expect((await pushService.waitForMessages(a.pushId, pushes + 1, 15_000)).length).toBe(pushes + 1);
    await approveOn(a, /rm -rf build/);
    expect(await answer).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'allow',
      permissionDecisionReason: 'latch: approved on Phone A',
    });
  });

  it('deny: the phone refuses, the hook denies with the reason', async () => {
    const answer = hook('Bash', { command: 'rm -rf dist' });
    await denyOn(b, /rm -rf dist/);
    expect(await answer).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: 'latch: denied on Phone B',
    });
  });

  it('timeout: with no answer before the deadline, the hook denies and says so', async () => {
    const answer = hook('Bash', { command: 'rm -rf /var/tmp/x' });
    expect(await answer).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(
        /^latch: expired: no phone answered before the deadline/,
      ),
    });
  });

  it('panic stops a running latch exec and blocks the next call with kill_switch; two phones resume, and calls pass again', async () => {
    const exec = spawn(process.execPath, [LATCH_BIN, 'exec', '--', 'sleep', '1000'], {
      env: machine.env,
      stdio: 'ignore',
    });
    // Whatever the outcome, nothing this test started outlives it.
    onTestFinished(() => killAll([exec.pid!]));
    await expect
      .poll(() => readFileSync(`/proc/${exec.pid}/task/${exec.pid}/children`, 'utf8').trim())
      .not.toBe('');
    const sleeper = Number(
      readFileSync(`/proc/${exec.pid}/task/${exec.pid}/children`, 'utf8').trim().split(' ')[0],
    );
    onTestFinished(() => killAll([sleeper]));

    await holdPanic(a.browser, origin);
    // Stopped (T), or frozen in latch exec's cgroup where the machine gives it one.
    await expect.poll(() => isHeld(sleeper)).toBe(true);
    expect(await hook('Read', { file_path: '/srv/app/README.md' })).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(/^latch: kill_switch/),
    });

    for (const phone of [a, b]) {
      await phone.browser.page.goto(origin);
      await phone.browser.page.getByRole('button', { name: 'Vote to resume (Face ID)' }).click();
      await phone.browser.page
        .getByText(/^(Your vote is counted\.|Armed)/)
        .first()
        .waitFor();
    }
    await expect.poll(async () => (await runLatch(machine, ['status'])).code).toBe(0);
    await expect.poll(() => isHeld(sleeper)).toBe(false);
    expect(await hook('Read', { file_path: '/srv/app/README.md' })).toMatchObject({
      permissionDecision: 'allow',
    });
  });

  describe('a hostile relay', () => {
    it('forges an approval with a key of its own: refused, audited, nothing runs', async () => {
      const answer = hook('Bash', { command: 'rm -rf ~/.ssh' });
      await expect.poll(() => proxy.requests.at(-1)?.sealed.length).toBe(2);
      const request = proxy.requests.at(-1)!;
      const relaysOwn = await createPhone('The relay’s own key');
      const assertion = await relaysOwn.authenticator.assert({
        rpId: 'localhost',
        origin,
        challenge: new Uint8Array(32),
      });
      const phoneId = request.sealed[0]!.device;
      proxy.inject({
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId: request.requestId,
        token: {
          v: PROTOCOL_VERSION,
          fleet: request.fleet,
          host: request.host,
          requestId: request.requestId,
          decision: 'approve',
          device: phoneId,
          assertion,
        },
        at: Date.now(),
      });
      await expect
        .poll(() => refusals(request.requestId).map((line) => line['code']))
        .toEqual(['unknown_credential']);
      await denyOn(a, /rm -rf ~\/\.ssh/);
      expect(await answer).toMatchObject({ permissionDecision: 'deny' });
    });

    it('replays an old token for a new request, and again for its own: refused, audited, nothing runs', async () => {
      const old = proxy.frames.find((frame) => frame.event.type === 'approved')!.event as {
        token: CapabilityToken;
        requestId: string;
      };
      const answer = hook('Bash', { command: 'rm -rf /etc/nginx' });
      await expect.poll(() => proxy.requests.length).toBeGreaterThan(0);
      await expect
        .poll(
          () =>
            refusals(latestRequestId()).length === 0 && proxy.requests.at(-1)!.requestId !== old.requestId,
        )
        .toBe(true);
      const requestId = latestRequestId();
      proxy.inject({
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId,
        token: { ...old.token, requestId },
        at: Date.now(),
      });
      proxy.inject({
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId: old.requestId,
        token: old.token,
        at: Date.now(),
      });
      await expect
        .poll(() => refusals(requestId).map((line) => line['code']))
        .toEqual(['challenge_mismatch']);
      await expect.poll(() => refusals(old.requestId).length).toBe(1);
      expect(['already_used', 'counter_not_increased']).toContain(refusals(old.requestId)[0]!['code']);
      await denyOn(b, /rm -rf \/etc\/nginx/);
      expect(await answer).toMatchObject({ permissionDecision: 'deny' });
    });

    it('swaps the request text for a harmless one: the phone cannot open it, so nobody approves, and it expires', async () => {
      proxy.swapBoxesWith = proxy.requests[0]!.sealed; // the boxes of "rm -rf build", approved earlier
      const answer = hook('Bash', { command: 'rm -rf /srv' });
      await expect.poll(() => proxy.requests.at(-1)?.sealed).toBe(proxy.swapBoxesWith);
      proxy.swapBoxesWith = undefined;
      await a.browser.page.goto(origin);
      // The box is bound to its own request: under another request id it does not open, so the
      // harmless text is never shown for the dangerous call.
      await a.browser.page.getByText('Nothing is waiting.').waitFor();
      expect(await answer).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(/^latch: expired/),
      });
    });
  });

  describe('restarts', () => {
    it('a relay restarted with a request pending: the request can still be decided', async () => {
      const answer = hook('Bash', { command: 'rm -rf node_modules' });
      // Stored at the relay: the phone lists it.
      await b.browser.page.goto(origin);
      await b.browser.page.getByRole('button', { name: /rm -rf node_modules/ }).waitFor();
      await rig.restartRelay(async () => {
        await expect.poll(() => proxy.daemonConnected).toBe(false);
      });
      await approveOn(b, /rm -rf node_modules/);
      // The daemon was away while the phone decided: it hears the decision when it is back.
      await expect.poll(() => proxy.daemonConnected, { timeout: 30_000 }).toBe(true);
      expect(await answer).toMatchObject({
        permissionDecision: 'allow',
        permissionDecisionReason: 'latch: approved on Phone B',
      });
    });

    it('a daemon restarted: a used token stays used', async () => {
      const used = proxy.frames.filter((frame) => frame.event.type === 'approved').at(-1)!.event as {
        token: CapabilityToken;
        requestId: string;
      };
      await rig.restartDaemon();
      await expect.poll(() => proxy.daemonConnected).toBe(true);
      proxy.inject({
        v: PROTOCOL_VERSION,
        type: 'approved',
        requestId: used.requestId,
        token: used.token,
        at: Date.now(),
      });
      await expect.poll(() => refusals(used.requestId).length).toBe(1);
      expect(['already_used', 'counter_not_increased']).toContain(refusals(used.requestId)[0]!['code']);
    });
  });

  it('leaves no command text in the relay’s persisted storage', () => {
    const files = (readdirSync(rig.state, { recursive: true, encoding: 'utf8' }) as string[])
      .map((file) => join(rig.state, file))
      .filter((path) => statSync(path).isFile() && !path.endsWith('relay.env'));
    const stored = files.map((path) => readFileSync(path).toString('latin1')).join('\n');
    expect(files.some((path) => path.endsWith('.sqlite'))).toBe(true);
    expect(stored).toContain(proxy.requests[0]!.requestId); // the storage is really read
    for (const command of commands) expect(stored, command).not.toContain(command);
  });
});
