import type { Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvePending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { deliverPush } from '../support/browserPhone.ts';
import { REQUEST_EXIT } from '../../daemon/cli/exitCodes.ts';
import { auditLines, runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { startNotificationRig, type NotificationRig } from '../support/notificationRig.ts';
import type { PhoneRig } from '../support/phoneRig.ts';
import { notificationsOf, tapNotification } from '../support/serviceWorker.ts';

let rig: PhoneRig;
let origin: string;
let machine: LatchMachine;
let a: PairedBrowserPhone;
let b: PairedBrowserPhone;
let askBoth: NotificationRig['askBoth'];
let nextPush: NotificationRig['nextPush'];
let parkOnDevices: NotificationRig['parkOnDevices'];
let pushCount: NotificationRig['pushCount'];

beforeAll(async () => {
  ({ rig, a, b, askBoth, nextPush, parkOnDevices, pushCount } = await startNotificationRig());
  ({ origin, machine } = rig);
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

describe('deciding from a notification', () => {
  it('shows the command with Approve and Deny, and denies from Deny in the service worker, which the daemon verifies', async () => {
    const { answer, requestId } = await askBoth('rm -rf build');
    const [shown] = await notificationsOf(a.browser, requestId);
    // The command itself first, then project · session · host.
    expect(shown).toMatchObject({
      title: 'rm -rf build',
      body: 'project · session- · test-box',
      tag: requestId,
    });
    expect(
      await a.browser.page.evaluate(async (tag) => {
        const [notification] = await (await navigator.serviceWorker.ready).getNotifications({ tag });
        return (notification as unknown as { actions: { action: string }[] }).actions.map((x) => x.action);
      }, requestId),
    ).toEqual(['approve', 'deny']);

    await tapNotification(a.browser, requestId, 'deny');

    // The daemon got the deny signed by Phone A's device key, verified it, and told the agent.
    expect(await answer).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: 'latch: denied on Phone A',
    });
    const denied = auditLines(machine).filter(
      (line) => line['event'] === 'denied' && line['requestId'] === requestId,
    );
    expect(denied).toEqual([expect.objectContaining({ verified: true })]);
    // The notification now says what happened, and offers nothing more to do.
    expect(await notificationsOf(a.browser, requestId)).toEqual([
      expect.objectContaining({ title: 'Denied', data: expect.objectContaining({ outcome: 'denied' }) }),
    ]);
  });

  it('refuses a Deny from a notification whose request another phone already approved: already_decided, one decision', async () => {
    const { answer, requestId } = await askBoth('git push --force');
    await approvePending(b.browser, origin, /git push --force/);
    expect(await answer).toMatchObject({
      permissionDecision: 'allow',
      permissionDecisionReason: 'latch: approved on Phone B',
    });

    // Phone A never got the close (not delivered here): its notification still offers Deny.
    await tapNotification(a.browser, requestId, 'deny');
    expect(await notificationsOf(a.browser, requestId)).toEqual([
      expect.objectContaining({
        title: 'Not denied',
        data: expect.objectContaining({ outcome: 'refused', code: 'already_decided' }),
      }),
    ]);
    const decisions = auditLines(machine).filter(
      (line) =>
        line['requestId'] === requestId && (line['event'] === 'denied' || line['event'] === 'approved'),
    );
    expect(decisions.map((line) => line['event'])).toEqual(['approved']);
  });

  it('opens the request on Approve and on a plain tap, ready for Face ID, and approves nothing without it', async () => {
    const { answer, requestId } = await askBoth('npm publish');
    let settled = false;
    void answer.then(() => (settled = true));
    const decisions: string[] = [];
    const watch = (request: Request) => {
      if (/\/requests\/[^/]+\/(decision|deny)$/.test(request.url())) decisions.push(request.url());
    };
    a.browser.context.on('request', watch);

    await tapNotification(a.browser, requestId, 'approve');
    await a.browser.page.waitForURL(new RegExp(`/requests/[^/]+/${requestId}$`));
    const approve = a.browser.page.getByRole('button', { name: 'Approve with Face ID' });
    await approve.waitFor();
    await a.browser.page.getByText('npm publish', { exact: true }).waitFor();
    expect(await notificationsOf(a.browser, requestId)).toEqual([]);

    // iOS has no actions: the tap itself. The push comes again (a second device, say).
    await parkOnDevices(a.browser);
    await deliverPush(
      a.browser,
      origin,
      (await nextPush(a, (m) => m.type === 'request' && m.requestId === requestId)).payload,
    );
    await expect.poll(() => notificationsOf(a.browser, requestId)).toHaveLength(1);
    await tapNotification(a.browser, requestId, '');
    await a.browser.page.waitForURL(new RegExp(`/requests/[^/]+/${requestId}$`));
    await approve.waitFor();

    // Nothing was decided by the taps: the agent still waits.
    a.browser.context.off('request', watch);
    expect(decisions).toEqual([]);
    expect(settled).toBe(false);
    await approve.click();
    await a.browser.page.getByRole('status').getByText('Approval sent').waitFor();
    expect(await answer).toMatchObject({
      permissionDecision: 'allow',
      permissionDecisionReason: 'latch: approved on Phone A',
    });
  });

  it('asks a page the worker does not control to show the request itself', async () => {
    const { answer, requestId } = await askBoth('terraform apply');
    // DevTools' "bypass the service worker": the page loads from the network, uncontrolled.
    await a.browser.cdp.send('Network.enable');
    await a.browser.cdp.send('Network.setBypassServiceWorker', { bypass: true });
    try {
      await a.browser.page.goto(origin);
      expect(await a.browser.page.evaluate(() => navigator.serviceWorker.controller)).toBeNull();
      await a.browser.page.getByRole('button', { name: /Panic/ }).waitFor();
      await tapNotification(a.browser, requestId, 'approve');
      await a.browser.page.waitForURL(new RegExp(`/requests/[^/]+/${requestId}$`));
      await a.browser.page.getByRole('button', { name: 'Approve with Face ID' }).waitFor();
    } finally {
      await a.browser.cdp.send('Network.setBypassServiceWorker', { bypass: false });
    }
    await a.browser.page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await answer).toMatchObject({ permissionDecision: 'deny' });
  });

  it('shows a push that arrives after its request expired quietly, with neither Approve nor Deny', async () => {
    const from = await pushCount(a);
    const asked = runLatch(machine, ['request', '--title', 'late push', '--timeout', '2']);
    const { payload, message } = await nextPush(a, (pushed) => pushed.type === 'request', from);
    if (message.type !== 'request') throw new Error('not a request push');
    // The request ended unanswered before its push reached the phone (offline, say).
    expect(await asked).toMatchObject({ code: REQUEST_EXIT.denied });
    await parkOnDevices(a.browser);
    await deliverPush(a.browser, origin, payload);
    await expect.poll(() => notificationsOf(a.browser, message.requestId)).toHaveLength(1);
    expect(
      await a.browser.page.evaluate(async (tag) => {
        const [shown] = await (await navigator.serviceWorker.ready).getNotifications({ tag });
        const { title, requireInteraction, silent, actions } = shown as Notification & {
          actions: { action: string }[];
        };
        return { title, requireInteraction, silent, actions: actions.map((x) => x.action) };
      }, message.requestId),
    ).toEqual({ title: 'Expired: late push', requireInteraction: false, silent: true, actions: [] });
  });

  it('says only "Approval needed on <host>" with lock-screen privacy on, and its Deny still works', async () => {
    const privacy = a.browser.page.getByRole('checkbox', { name: /Lock-screen privacy/ });
    await a.browser.page.goto(`${origin}/devices`);
    await privacy.check();
    try {
      const { answer, requestId } = await askBoth('cat ~/.ssh/id_ed25519');
      expect(await notificationsOf(a.browser, requestId)).toEqual([
        expect.objectContaining({ title: 'Approval needed on test-box', body: '' }),
      ]);
      // The setting is this phone's own: Phone B still shows the command.
      expect(await notificationsOf(b.browser, requestId)).toEqual([
        expect.objectContaining({ title: 'cat ~/.ssh/id_ed25519' }),
      ]);
      await tapNotification(a.browser, requestId, 'deny');
      expect(await answer).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: 'latch: denied on Phone A',
      });
    } finally {
      await a.browser.page.goto(`${origin}/devices`);
      await privacy.uncheck();
    }
  });
});
