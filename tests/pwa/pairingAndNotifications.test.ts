import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import type { BrowserPhone } from '../support/browserPhone.ts';
import { askHook, hookInput } from '../support/latchMachine.ts';
import { startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { auditScreen, SIZES, type ScreenFinding } from '../support/screenAudit.ts';

let rig: PhoneRig;
let origin: string;
let phoneA: BrowserPhone;
let phoneB: PairedBrowserPhone | undefined;
/** What axe found, per screen, scheme and width: printed at the end for the person reading the run. */
const found: ScreenFinding[] = [];

beforeAll(async () => {
  rig = await startPhoneRig({ name: 'a11y-push', relay: 'app-copy', quorum: 1, phones: ['Phone A'] });
  origin = rig.origin;
  phoneA = rig.phones[0]!.browser;
}, 180_000);

afterAll(async () => {
  console.table(found);
  await rig?.stop();
});

const auditPhone = (phone: BrowserPhone, screen: string) => auditScreen(phone.page, phone.cdp, screen, found);

/**
 * The page's push service, under the test's control: `sessionStorage['test.push']` says whether
 * it answers a subscribe ('answer'), fails it ('fail'), or holds it ('hold', the default) until
 * `__releasePush()`, which answers it and every later one. It wraps the stand-in subscription
 * launchPhone installs, whichever init script runs first.
 */
async function controlPushService(browser: BrowserPhone): Promise<void> {
  await browser.context.addInitScript(() => {
    const prototype = PushManager.prototype;
    let answer = prototype.subscribe;
    const held: (() => void)[] = [];
    const w = window as unknown as { __releasePush: () => void; __pushHeld: () => number };
    w.__releasePush = () => {
      sessionStorage.setItem('test.push', 'answer');
      held.splice(0).forEach((release) => release());
    };
    w.__pushHeld = () => held.length;
    function subscribe(this: PushManager, options?: PushSubscriptionOptionsInit) {
      const mode = sessionStorage.getItem('test.push') ?? 'hold';
      if (mode === 'answer') return answer.call(this, options);
      if (mode === 'fail')
        return Promise.reject(
          new DOMException('Registration failed - push service not available', 'AbortError'),
        );
      return new Promise<PushSubscription>((resolve) => held.push(() => resolve(answer.call(this, options))));
    }
    Object.defineProperty(prototype, 'subscribe', {
      configurable: true,
      get: () => subscribe,
      set: (value: PushManager['subscribe']) => (answer = value),
    });
  });
}

/**
 * Phone B, its push service under the test's control: paired by the first test, or here, its push
 * service answering from the start, when a later test runs alone (`-t`).
 */
async function phoneWithControlledPush(): Promise<PairedBrowserPhone> {
  phoneB ??= await rig.pairPhone('Phone B', {
    prepare: async (phone) => {
      await controlPushService(phone);
      await phone.context.addInitScript(() => {
        if (sessionStorage.getItem('test.push') === null) sessionStorage.setItem('test.push', 'answer');
      });
    },
  });
  return phoneB;
}

describe('pairing and notifications', () => {
  it('pairs without waiting for the push service, and sends the subscription once it answers', async () => {
    const launched: { browser?: BrowserPhone } = {};
    // Phone A approves adding it.
    const pairing = rig.pairPhone('Phone B', {
      prepare: async (phone) => {
        launched.browser = phone;
        await controlPushService(phone);
      },
    });
    pairing.catch(() => undefined); // awaited below; a failure is reported there
    // Paired, while the push service has not answered...
    await expect
      .poll(async () => (await launched.browser?.page.getByText(/^Paired with test-box\.$/).count()) ?? 0, {
        timeout: 90_000,
      })
      .toBe(1);
    const page = launched.browser!.page;
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { __pushHeld(): number }).__pushHeld()))
      .toBeGreaterThan(0);
    expect(await page.getByText('Notifications are on.').count()).toBe(0);
    // ...and when it does, the relay gets the subscription: this phone's pushes arrive.
    await page.evaluate(() => (window as unknown as { __releasePush(): void }).__releasePush());
    phoneB = await pairing;
    // A conversation of its own: no other request's push cap holds its push back.
    const hook = askHook(
      rig.machine,
      hookInput('PreToolUse', 'Bash', { command: 'rotate-keys --all' }, { session_id: 'push-check' }),
    );
    expect(await rig.pushService.waitForMessages(phoneB.pushId, 1, 20_000)).toHaveLength(1);
    await openPending(phoneB.browser, origin, /rotate-keys --all/);
    await phoneB.browser.page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await hook).toMatchObject({ permissionDecision: 'deny' });
  }, 180_000);

  it('lists the devices with their buttons aligned', async () => {
    const page = phoneA.page;
    await page.goto(`${origin}/devices`);
    await page.getByText('Phone A (this phone)').waitFor();
    await page.getByText('Phone B').waitFor();
    const problems: string[] = [];
    for (const { width, height } of SIZES) {
      await page.setViewportSize({ width, height });
      const rows = await page.locator('.members li:has(button)').evaluateAll((items) =>
        items.map((item) =>
          [...item.querySelectorAll('button')].map((button) => {
            const rect = button.getBoundingClientRect();
            return {
              text: button.textContent,
              left: rect.left,
              right: rect.right,
              top: rect.top,
              height: rect.height,
            };
          }),
        ),
      );
      expect(rows).toHaveLength(2);
      // The same button sits at the same place in every row, and a row's buttons side by side.
      const [first, second] = rows as [(typeof rows)[0], (typeof rows)[0]];
      for (const [index, button] of first.entries()) {
        expect({ width, text: button.text, left: second[index]!.left, right: second[index]!.right }).toEqual({
          width,
          text: button.text,
          left: button.left,
          right: button.right,
        });
      }
      for (const row of rows) expect(new Set(row.map(({ top }) => top)).size).toBe(1);
    }
    problems.push(...(await auditPhone(phoneA, 'devices')));
    expect(problems).toEqual([]);
  });

  it('says "No notifications on this phone", and why, when the push service fails or never answers', async () => {
    const { browser } = await phoneWithControlledPush();
    const page = browser.page;
    const banner = page.getByRole('status', { name: 'notifications' });
    await page.evaluate(() => sessionStorage.setItem('test.push', 'fail'));
    await page.goto(origin);
    await banner
      .getByText('The push service did not give this phone a subscription.')
      .waitFor({ timeout: 20_000 });
    expect(await banner.textContent()).toMatch(/^No notifications on this phone\./);
    const problems = await auditPhone(browser, 'home-no-notifications');

    await page.evaluate(() => sessionStorage.setItem('test.push', 'hold'));
    await page.goto(origin);
    await banner.getByText('The push service did not answer.').waitFor({ timeout: 60_000 });

    // Once the push service answers, the banner goes.
    await page.evaluate(() => (window as unknown as { __releasePush(): void }).__releasePush());
    await expect.poll(() => banner.count(), { timeout: 20_000 }).toBe(0);
    expect(problems).toEqual([]);
  });

  it('says so when notifications are not allowed, and turns them on from a tap', async () => {
    const { browser } = await phoneWithControlledPush();
    const page = browser.page;
    const banner = page.getByRole('status', { name: 'notifications' });
    await browser.context.clearPermissions();
    await page.goto(origin);
    await banner.getByText('Notifications are not turned on.').waitFor({ timeout: 20_000 });
    await browser.context.grantPermissions(['notifications'], { origin });
    await banner.getByRole('button', { name: 'Turn on notifications' }).click();
    await expect.poll(() => banner.count(), { timeout: 20_000 }).toBe(0);

    await browser.cdp.send('Browser.setPermission', {
      permission: { name: 'notifications' },
      setting: 'denied',
      origin,
    });
    await page.goto(origin);
    await banner.getByText(/Notifications are blocked for Latch/).waitFor({ timeout: 20_000 });
    expect(await banner.getByRole('button').count()).toBe(0);
    const problems = await auditPhone(browser, 'home-notifications-blocked');
    expect(problems).toEqual([]);
  });
});
