import type { Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PairedBrowserPhone } from '../support/browserFlows.ts';
import type { BrowserPhone } from '../support/browserPhone.ts';
import { startNotificationRig, type NotificationRig } from '../support/notificationRig.ts';
import type { PhoneRig } from '../support/phoneRig.ts';
import { tapNotification } from '../support/serviceWorker.ts';

let rig: PhoneRig;
let a: PairedBrowserPhone;
let askBoth: NotificationRig['askBoth'];
let nextPush: NotificationRig['nextPush'];

beforeAll(async () => {
  ({ rig, a, askBoth, nextPush } = await startNotificationRig());
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

/** Each call the app makes to the relay's API (`METHOD /v1/...`) until `stop`. */
function relayCalls(phone: BrowserPhone): { calls: string[]; stop(): void } {
  const calls: string[] = [];
  const record = (request: Request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/v1/')) calls.push(`${request.method()} ${pathname}`);
  };
  phone.context.on('request', record);
  return { calls, stop: () => phone.context.off('request', record) };
}

/** From the notification's tap to the approval on the request's screen: the relay calls made. */
async function approveFromTap(requestId: string, command: string): Promise<string[]> {
  const { page } = a.browser;
  const watched = relayCalls(a.browser);
  try {
    await tapNotification(a.browser, requestId, '');
    await page.waitForURL(new RegExp(`/requests/[^/]+/${requestId}$`));
    await expect.poll(() => page.locator('.request-title').textContent()).toContain(command.slice(0, 40));
    await page.getByRole('button', { name: 'Approve with Face ID' }).click();
    await page.getByRole('status').getByText('Approval sent').waitFor();
    return watched.calls;
  } finally {
    watched.stop();
  }
}

/** The app's fetch of one request (GET /v1/fleets/:fleet/requests/:id). */
const fetchesOf = (calls: string[], requestId: string) =>
  calls.filter((call) => call.startsWith('GET ') && call.endsWith(`/requests/${requestId}`));

describe('an approval from a notification', () => {
  it('asks the relay nothing but the decision when the push carried the box', async () => {
    const { answer, requestId } = await askBoth('make deploy');
    const pushed = await nextPush(a, (m) => m.type === 'request' && m.requestId === requestId);
    expect(pushed.message).toHaveProperty('box');

    const calls = await approveFromTap(requestId, 'make deploy');

    expect(await answer).toMatchObject({ permissionDecision: 'allow' });
    expect(calls.filter((call) => call.startsWith('GET '))).toEqual([]);
    expect(calls).toContainEqual(
      expect.stringMatching(new RegExp(`^POST /v1/fleets/[^/]+/requests/${requestId}/decision$`)),
    );
  });

  it('fetches the request once when its box did not fit in the push', async () => {
    // Sealed and base64url-encoded, 3,000 bytes of command outgrow the push (and stay low risk).
    const command = `echo ${'x'.repeat(3000)}`;
    const { answer, requestId } = await askBoth(command);
    const pushed = await nextPush(a, (m) => m.type === 'request' && m.requestId === requestId);
    expect(pushed.message).not.toHaveProperty('box');

    const calls = await approveFromTap(requestId, command);

    expect(await answer).toMatchObject({ permissionDecision: 'allow' });
    expect(fetchesOf(calls, requestId)).toHaveLength(1);
  });

  it('asks the relay for the conversation only to deny the whole session of a request from its push', async () => {
    const { answer, requestId } = await askBoth('make release');
    const { page } = a.browser;
    const watched = relayCalls(a.browser);
    try {
      await tapNotification(a.browser, requestId, '');
      await page.getByText('make release', { exact: true }).waitFor();
      expect(watched.calls.filter((call) => call.startsWith('GET '))).toEqual([]);
      await page.getByRole('button', { name: 'Deny all waiting from this session' }).click();
      await page.getByRole('status').getByText('1 request from this session denied.').waitFor();
    } finally {
      watched.stop();
    }
    expect(await answer).toMatchObject({ permissionDecision: 'deny' });
    expect(fetchesOf(watched.calls, requestId)).toHaveLength(1);
  });
});
