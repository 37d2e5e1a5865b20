import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOST_LISTED, type RequestList } from '../../shared/messages/relayViews.ts';
import type { PairedBrowserPhone } from '../support/browserFlows.ts';
import { deliverPush } from '../support/browserPhone.ts';
import { runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { parsed, startNotificationRig, type NotificationRig } from '../support/notificationRig.ts';
import type { PhoneRig } from '../support/phoneRig.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';
import { notificationsOf, tapNotification } from '../support/serviceWorker.ts';

let rig: PhoneRig;
let origin: string;
let pushService: PushServiceClient;
let machine: LatchMachine;
let a: PairedBrowserPhone;
let b: PairedBrowserPhone;
let askBoth: NotificationRig['askBoth'];
let showOn: NotificationRig['showOn'];
let pushCount: NotificationRig['pushCount'];
let closedPush: NotificationRig['closedPush'];

beforeAll(async () => {
  ({ rig, a, b, askBoth, showOn, pushCount, closedPush } = await startNotificationRig());
  ({ origin, pushService, machine } = rig);
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

describe('closing a notification when its request stops waiting', () => {
  it('closes it on Phone A when Phone B denies from its own notification; B, which decided, gets no close', async () => {
    const { answer, requestId } = await askBoth('docker system prune');
    await tapNotification(b.browser, requestId, 'deny');
    expect(await answer).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: 'latch: denied on Phone B',
    });

    const close = await closedPush(a, requestId);
    expect(JSON.parse(close.payload)).toEqual({
      v: 1,
      type: 'closed',
      fleet: expect.any(String),
      requestId,
    });
    // A close for another request, or for another fleet's request of the same id, is not this one's.
    const { fleet } = JSON.parse(close.payload) as { fleet: string };
    await deliverPush(
      a.browser,
      origin,
      JSON.stringify({ v: 1, type: 'closed', fleet: 'another', requestId }),
    );
    await deliverPush(a.browser, origin, JSON.stringify({ v: 1, type: 'closed', fleet, requestId: 'other' }));
    // A push the worker visibly handles after those: once it shows, they were handled too.
    await deliverPush(a.browser, origin, JSON.stringify({ v: 1, type: 'summary', fleet, pending: 1 }));
    await expect.poll(() => notificationsOf(a.browser, `summary-${fleet}`)).toHaveLength(1);
    expect(await notificationsOf(a.browser, requestId)).toHaveLength(1);
    await a.browser.page.evaluate(async (tag) => {
      for (const shown of await (await navigator.serviceWorker.ready).getNotifications({ tag }))
        shown.close();
    }, `summary-${fleet}`);

    await deliverPush(a.browser, origin, close.payload);
    await expect.poll(() => notificationsOf(a.browser, requestId)).toEqual([]);
    // Phone B shows the outcome of its own deny; no close was sent to it.
    expect(await notificationsOf(b.browser, requestId)).toEqual([
      expect.objectContaining({ title: 'Denied' }),
    ]);
    const toB = (await pushService.messages(b.pushId)).map((message) => parsed(message.payload));
    expect(toB.filter((message) => message.type === 'closed' && message.requestId === requestId)).toEqual([]);
  });

  it('closes it on every phone when the request expires unanswered', async () => {
    const from = await Promise.all([a, b].map(pushCount));
    // Long enough for both notifications to show first on a busy machine: once the request has
    // expired, the app's own pending list rightly closes a notification it finds (CI saw 8 s
    // run out before Phone B's showed).
    const asked = runLatch(machine, ['request', '--title', 'Rotate the keys', '--timeout', '40'], {
      timeoutMs: 90_000,
    });
    const [requestId, onB] = await Promise.all([showOn(a, from[0]!), showOn(b, from[1]!)]);
    expect(onB).toBe(requestId);
    expect(await asked).toMatchObject({ code: 1, stdout: expect.stringMatching(/^denied: expired/) });
    for (const phone of [a, b]) {
      await deliverPush(phone.browser, origin, (await closedPush(phone, requestId)).payload);
      await expect.poll(() => notificationsOf(phone.browser, requestId)).toEqual([]);
    }
  });

  it('turns a request open on Phone A to Already decided when Phone B denies it', async () => {
    const { answer, requestId } = await askBoth('terraform destroy');
    await tapNotification(a.browser, requestId, '');
    await a.browser.page.waitForURL(new RegExp(`/requests/[^/]+/${requestId}$`));
    await a.browser.page.getByRole('button', { name: 'Approve with Face ID' }).waitFor();

    await tapNotification(b.browser, requestId, 'deny');
    expect(await answer).toMatchObject({ permissionDecision: 'deny' });
    await deliverPush(a.browser, origin, (await closedPush(a, requestId)).payload);
    const result = a.browser.page.getByRole('status');
    await result.getByRole('heading', { name: 'Already decided' }).waitFor();
    expect(await result.textContent()).toBe('Already decidedThis request was already denied.');

    // Phone B, reopening the request it answered, is told it answered it.
    await b.browser.page.goto(a.browser.page.url());
    await b.browser.page
      .getByRole('status')
      .getByText('This request was already denied on this phone.', { exact: true })
      .waitFor();
  });

  it('closes a stale one when the app lists requests, as on an iPhone, which gets no close push', async () => {
    const { answer, requestId } = await askBoth('kubectl delete ns staging');
    await tapNotification(b.browser, requestId, 'deny');
    expect(await answer).toMatchObject({ permissionDecision: 'deny' });
    await closedPush(a, requestId); // sent, and not delivered: as if the phone were an iPhone
    expect(await notificationsOf(a.browser, requestId)).toHaveLength(1);

    await a.browser.page.goto(origin);
    await a.browser.page.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    await expect.poll(() => notificationsOf(a.browser, requestId)).toEqual([]);
  });

  it('keeps it when the list is full: a list of 1000 leaves out requests that still wait (review rh: a host’s flood)', async () => {
    const { answer, requestId } = await askBoth('helm uninstall api');
    const { page } = a.browser;
    const listOf = (length: number): RequestList => ({
      v: 1,
      requests: Array.from({ length }, (_, i) => ({
        requestId: `flood-${i}`,
        host: 'another-host',
        conversation: 'flood',
        risk: 'low',
        createdAt: Date.now(),
        exp: Date.now() + 3600_000,
        state: 'pending',
      })),
    });
    // The relay's list, full of another host's requests, not this one.
    let answered = 0;
    const withList = async (length: number) => {
      const asked = answered;
      await page.route('**/requests?state=pending', (route) => {
        answered++;
        return route.fulfill({
          status: 200,
          contentType: 'application/json',
          body: JSON.stringify(listOf(length)),
        });
      });
      await page.goto(origin);
      await expect.poll(() => answered).toBeGreaterThan(asked);
    };
    await withList(MOST_LISTED);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await notificationsOf(a.browser, requestId)).toHaveLength(1);
    // One short of full, the same absence closes it: nothing left out, so it no longer waits.
    await page.unrouteAll();
    await withList(MOST_LISTED - 1);
    await expect.poll(() => notificationsOf(a.browser, requestId)).toEqual([]);
    await page.unrouteAll();

    await tapNotification(b.browser, requestId, 'deny');
    expect(await answer).toMatchObject({ permissionDecision: 'deny' });
  });
});
