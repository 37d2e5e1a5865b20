import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { holdPanic, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { isHeld, killAll } from '../support/processes.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import type { PhoneRig } from '../support/phoneRig.ts';
import { startWholeLoopRig, type WholeLoopRig } from '../support/wholeLoopRig.ts';

let rig: PhoneRig;
let origin: string;
let pushService: PushServiceClient;
let machine: LatchMachine;
let hook: WholeLoopRig['hook'];
let approveOn: WholeLoopRig['approveOn'];
let denyOn: WholeLoopRig['denyOn'];
let a: PairedBrowserPhone;
let b: PairedBrowserPhone;

// Paired in the set-up, so that each test runs alone (-t): phone A, trusted first, approves adding B.
beforeAll(async () => {
  ({ rig, hook, approveOn, denyOn } = await startWholeLoopRig(['Phone A', 'Phone B']));
  ({ origin, pushService, machine } = rig);
  [a, b] = rig.phones as [PairedBrowserPhone, PairedBrowserPhone];
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

describe('the whole loop, every part real', () => {
  it('pairs two phones, through the relay behind the proxy', async () => {
    const status = await runLatch(machine, ['status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ state: 'armed', devices: 2 });
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
});
