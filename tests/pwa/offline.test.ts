import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushMessageSchema } from '../../shared/messages/pushMessages.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import type { PairedBrowserPhone } from '../support/browserFlows.ts';
import { deliverPush } from '../support/browserPhone.ts';
import { keptOnPhone } from '../support/keptOnPhone.ts';
import { askHook, hookInput, type LatchMachine } from '../support/latchMachine.ts';
import { ASK_EVERY_BASH_CALL, startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';
import { notificationsOf, tapNotification } from '../support/serviceWorker.ts';

let rig: PhoneRig;
let origin: string;
let pushService: PushServiceClient;
let machine: LatchMachine;
let phone: PairedBrowserPhone;

beforeAll(async () => {
  rig = await startPhoneRig({
    name: 'offline',
    relay: 'app-copy',
    policy: ASK_EVERY_BASH_CALL,
    phones: ['Phone A'],
  });
  ({ origin, pushService, machine } = rig);
  [phone] = rig.phones as [PairedBrowserPhone];
}, 120_000);

afterAll(async () => {
  await phone?.browser.context.setOffline(false);
  await rig?.stop();
});

/** The app's start page, under its service worker (a page loaded before the worker took over is not). */
async function openControlled(): Promise<void> {
  const { page } = phone.browser;
  await page.goto(origin);
  await page.evaluate(() => navigator.serviceWorker.ready);
  if (!(await page.evaluate(() => navigator.serviceWorker.controller !== null))) await page.reload();
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
}

/** HH:MM as the phone's clock shows `at`. */
const clockAt = (at: number) =>
  phone.browser.page.evaluate((time) => {
    const date = new Date(time);
    return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
  }, at);

describe('installable and offline', () => {
  it('reports no installability errors on the start page, and the check sees a missing manifest', async () => {
    const { page, cdp } = phone.browser;
    await openControlled();
    await page.getByRole('button', { name: /Panic/ }).waitFor();
    expect(await cdp.send('Page.getInstallabilityErrors')).toEqual({ installabilityErrors: [] });

    // The same check, on the same origin, with the manifest gone: it does report, so the empty
    // list above is an answer. (The worker would serve its cached copy: it is bypassed here.)
    await cdp.send('Network.enable');
    await cdp.send('Network.setBypassServiceWorker', { bypass: true });
    await page.route('**/manifest.webmanifest', (route) => route.fulfill({ status: 404, body: '' }));
    try {
      await page.reload();
      await page.getByRole('button', { name: /Panic/ }).waitFor();
      const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
      expect(installabilityErrors.map((error) => error.errorId)).toContain(
        'manifest-parsing-or-network-error',
      );
    } finally {
      await page.unroute('**/manifest.webmanifest');
      await cdp.send('Network.setBypassServiceWorker', { bypass: false });
    }
  });

  it('loads the shell and the last-known list offline, says since when, and switches off what needs the network', async () => {
    const { page, context } = phone.browser;
    const before = (await pushService.messages(phone.pushId)).length;
    const input = hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' }, { session_id: 'offline' });
    const answer = askHook(machine, input);
    const item = page.getByRole('button', { name: /rm -rf build/ });

    // One visit online: the list as the relay has it.
    const online = Date.now();
    await openControlled();
    await item.waitFor();
    const panic = page.getByRole('button', { name: /Panic/ });
    expect(await panic.isDisabled()).toBe(false);
    const armedSaid = () =>
      page
        .getByText('Armed: agents run under your policy.')
        .evaluate((element) => getComputedStyle(element, '::before').content);

    await context.setOffline(true);
    const cut = Date.now();
    try {
      await page.reload();
      // The shell, from the worker's cache; the list, as last known; and no endless "Loading…".
      await panic.waitFor();
      const banner = page.getByRole('status').filter({ hasText: /^Offline/ });
      await banner.waitFor();
      const said = /^Offline — showing what was known at (\d\d:\d\d)\./.exec((await banner.textContent())!);
      expect(said?.[1]).toBeDefined();
      expect([await clockAt(online), await clockAt(cut)]).toContain(said![1]);
      await item.waitFor();
      expect(await page.getByText('Loading…').count()).toBe(0);
      // What needs the relay is off, and says why.
      expect(await panic.isDisabled()).toBe(true);
      expect(await item.isDisabled()).toBe(true);
      expect(await item.getAttribute('aria-describedby')).toBe('offline-reason');
      expect(await banner.textContent()).toContain('Approving, denying and PANIC need the network');
      // "Armed" is what was last known, not the live state: another phone may have frozen since.
      expect(await armedSaid()).toBe('"Last known: "');
      await phone.browser.screenshot('offline');

      // What was kept is what the relay sent: the request is still a sealed box on the phone.
      const stored = Object.values(await keptOnPhone(page));
      const kept = stored
        .map((value) => JSON.parse(value) as { json?: string })
        .filter((value) => typeof value.json === 'string')
        .map((value) => value.json!)
        .join('\n');
      expect(kept).toMatch(/"box":"[\w-]+"/);
      expect(stored.join('\n')).not.toContain('rm -rf build');

      // A Deny from a notification, offline, is not sent, and the notification says so.
      const pushed = await pushService.waitForMessages(phone.pushId, before + 1, 15_000);
      const message = parseJson(pushMessageSchema, pushed.at(-1)!.payload);
      if (!message.ok || message.value.type !== 'request') throw new Error('no request push');
      const { requestId } = message.value;
      await deliverPush(phone.browser, origin, pushed.at(-1)!.payload);
      await expect.poll(() => notificationsOf(phone.browser, requestId)).toHaveLength(1);
      await tapNotification(phone.browser, requestId, 'deny');
      expect(await notificationsOf(phone.browser, requestId)).toEqual([
        expect.objectContaining({
          title: 'Not denied',
          data: expect.objectContaining({ outcome: 'refused', code: 'offline' }),
        }),
      ]);
    } finally {
      await context.setOffline(false);
    }

    // Back online: the banner goes at the next refresh, and the request can be decided again.
    await page
      .getByRole('status')
      .filter({ hasText: /^Offline/ })
      .waitFor({ state: 'detached' });
    await expect.poll(() => panic.isDisabled()).toBe(false);
    expect(await armedSaid()).toBe('none');
    await item.click();
    const deny = page.getByRole('button', { name: 'Deny', exact: true });
    await deny.waitFor();

    // Losing the network on the request screen turns its answers off; they return with the relay.
    await context.setOffline(true);
    try {
      await expect.poll(() => deny.isDisabled()).toBe(true);
      // It says why, rather than count down to a button that stays off; Escape denies, but not offline.
      const approve = page.locator('button.approve');
      expect(await approve.textContent()).toBe('Offline');
      expect(await approve.isDisabled()).toBe(true);
      expect(await page.getByText('Escape denies.').count()).toBe(0);
      await page.keyboard.press('Escape');
    } finally {
      await context.setOffline(false);
    }
    await expect.poll(() => deny.isDisabled()).toBe(false);
    await deny.click();
    expect(await answer).toMatchObject({ permissionDecision: 'deny' });
  });

  it('turns the answers off when the network goes between a request showing and its screen starting to listen', async () => {
    const { page, context } = phone.browser;
    const input = hookInput('PreToolUse', 'Bash', { command: 'rm -rf dist' }, { session_id: 'offline-race' });
    const answer = askHook(machine, input);
    await openControlled();
    const item = page.getByRole('button', { name: /rm -rf dist/ });
    await item.waitFor();

    // The phone says it lost its network in the moment after the request's buttons are drawn,
    // before the screen's effects run (a frame later): the moment a busy phone makes long.
    await page.evaluate(() => {
      const observer = new MutationObserver(() => {
        if (!document.querySelector('button.deny')) return;
        observer.disconnect();
        dispatchEvent(new Event('offline'));
        document.body.dataset['wentOffline'] = 'yes';
      });
      observer.observe(document.body, { childList: true, subtree: true });
    });
    await item.click();
    await page.waitForFunction(() => document.body.dataset['wentOffline'] === 'yes');
    const deny = page.getByRole('button', { name: 'Deny', exact: true });
    await context.setOffline(true);
    try {
      await expect.poll(() => deny.isDisabled()).toBe(true);
    } finally {
      await context.setOffline(false);
    }
    await expect.poll(() => deny.isDisabled()).toBe(false);
    await deny.click();
    expect(await answer).toMatchObject({ permissionDecision: 'deny' });
  });
});
