import { spawn, type ChildProcess } from 'node:child_process';
import type { Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { deliverPush } from '../support/browserPhone.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { auditLines, hookInput, type LatchMachine } from '../support/latchMachine.ts';
import { startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';
import { notificationsOf, tapNotification } from '../support/serviceWorker.ts';

const POLICY = `
default = "ask"
[[rule]]
name = "destructive"
tool = "Bash"
command = "rm *"
action = "ask"
risk = "low"
`;

let rig: PhoneRig;
let origin: string;
let pushService: PushServiceClient;
let machine: LatchMachine;
let phone: PairedBrowserPhone | undefined;
let hook: ChildProcess | undefined;

beforeAll(async () => {
  rig = await startPhoneRig({ name: 'pwa-withdrawn', relay: 'plain', policy: POLICY, phones: ['Phone'] });
  ({ origin, pushService, machine } = rig);
  [phone] = rig.phones;
}, 120_000);

afterAll(async () => {
  hook?.kill('SIGKILL');
  await rig?.stop();
});

/** A request's address at the relay (or an app route to one: those go through). */
const isRequestUrl = (url: URL) => /\/requests\/[^/]+$/.test(url.pathname);
/** A request screen's own GET of its request fails, as if the relay were out of reach. */
const failScreenRecheck = (route: Route) =>
  route.request().resourceType() === 'fetch' && route.request().method() === 'GET'
    ? route.abort()
    : route.continue();

describe('a request whose caller went away', () => {
  it('leaves the list, and the phone says it is no longer waiting, whether it approves, opens or denies it', async () => {
    const { page, context } = phone!.browser;
    const pushesBefore = (await pushService.messages(phone!.pushId)).length;
    hook = spawn(process.execPath, [LATCH_BIN, 'hook', 'claude-code'], {
      env: machine.env,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    hook.stdin!.end(hookInput('PreToolUse', 'Bash', { command: 'rm -rf cache' }));
    // One screen shows the request, ready to approve; another the list, which lists it.
    await openPending(phone!.browser, origin, /rm -rf cache/);
    const approve = page.getByRole('button', { name: 'Approve with Face ID' });
    await approve.waitFor();
    const list = await context.newPage();
    await list.goto(origin);
    const listed = list.locator('.requests:not(.recent)').getByRole('button', { name: /rm -rf cache/ });
    await listed.waitFor();
    // The open screen asks the relay now and then whether the request still waits (the next
    // test): not here, where what Approve does with a withdrawn request is looked at.
    await page.route(isRequestUrl, failScreenRecheck);

    hook.kill('SIGKILL');
    await expect
      .poll(() => auditLines(machine).filter((line) => line['event'] === 'withdrawn'))
      .toEqual([expect.objectContaining({ why: 'caller_gone' })]);
    await listed.waitFor({ state: 'detached' });
    await list.locator('.requests.recent li', { hasText: 'rm -rf cache' }).getByText('withdrawn').waitFor();

    await approve.click();
    const result = page.getByRole('status');
    await result.getByText('No longer waiting').waitFor();
    await result.getByText('The agent stopped waiting, or the fleet froze; nothing was approved.').waitFor();
    await phone!.browser.screenshot('withdrawn-request');

    await page.unroute(isRequestUrl, failScreenRecheck);
    await page.reload();
    await page.getByRole('status').getByText('No longer waiting').waitFor();
    await list.close();

    // Its push, delivered late: Deny on the notification says it no longer waits.
    const [pushed] = (await pushService.waitForMessages(phone!.pushId, pushesBefore + 1)).slice(pushesBefore);
    await deliverPush(phone!.browser, origin, pushed!.payload);
    const [withdrawn] = auditLines(machine).filter((line) => line['event'] === 'withdrawn');
    const requestId = String(withdrawn!['requestId']);
    await expect.poll(() => notificationsOf(phone!.browser, requestId)).toHaveLength(1);
    await tapNotification(phone!.browser, requestId, 'deny');
    expect(await notificationsOf(phone!.browser, requestId)).toEqual([
      expect.objectContaining({
        title: 'No longer waiting',
        body: 'The agent stopped waiting; nothing was approved.',
        data: expect.objectContaining({ code: 'withdrawn' }),
      }),
    ]);
    expect(auditLines(machine)).not.toContainEqual(expect.objectContaining({ event: 'approved' }));
    expect(auditLines(machine)).not.toContainEqual(expect.objectContaining({ event: 'denied' }));
  }, 120_000);

  it('turns an open screen to "No longer waiting" on its own, when no push says the request ended', async () => {
    const { page } = phone!.browser;
    hook = spawn(process.execPath, [LATCH_BIN, 'hook', 'claude-code'], {
      env: machine.env,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    hook.stdin!.end(hookInput('PreToolUse', 'Bash', { command: 'rm -rf tmp' }));
    await openPending(phone!.browser, origin, /rm -rf tmp/);
    await page.getByRole('button', { name: 'Approve with Face ID' }).waitFor();
    // As when the relay's push caps held back its "closed" push: none reaches this phone.
    hook.kill('SIGKILL');
    await expect
      .poll(() => auditLines(machine).filter((line) => line['event'] === 'withdrawn'))
      .toHaveLength(2);
    await page.getByRole('status').getByText('No longer waiting').waitFor({ timeout: 30_000 });
    expect(await page.getByRole('button', { name: 'Approve with Face ID' }).count()).toBe(0);
  });
});
