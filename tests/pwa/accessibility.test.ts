import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import { PAIRING_SECRET_BYTES } from '../../shared/pairing/pairingKeys.ts';
import { pairingLink } from '../../shared/pairing/pairingLink.ts';
import { holdPanic, openPending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { launchChromium, type BrowserPhone } from '../support/browserPhone.ts';
import { contrastRatio } from '../support/contrast.ts';
import { hookInput, runLatch, startHook, type LatchMachine, type Ran } from '../support/latchMachine.ts';
import { startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { auditScreen, SCHEMES, SIZES, type ScreenFinding } from '../support/screenAudit.ts';

const POLICY = `
default = "ask"
[[rule]]
name = "requests"
tool = "request"
action = "ask"
risk = "low"
`;

let rig: PhoneRig;
let app: string;
let origin: string;
let machine: LatchMachine;
let stranger: BrowserContext | undefined;
let phoneA: BrowserPhone;
let phoneB: PairedBrowserPhone | undefined;
/** What axe found, per screen, scheme and width: printed at the end for the person reading the run. */
const found: ScreenFinding[] = [];

beforeAll(async () => {
  rig = await startPhoneRig({ name: 'a11y', relay: 'app-copy', quorum: 1, policy: POLICY });
  ({ origin, machine } = rig);
  app = rig.app!;
}, 120_000);

afterAll(async () => {
  console.table(found);
  await stranger?.close();
  await rig?.stop();
});

const audit = (page: Page, cdp: CDPSession, screen: string) => auditScreen(page, cdp, screen, found);

const auditPhone = (phone: BrowserPhone, screen: string) => audit(phone.page, phone.cdp, screen);

async function strangerPage(): Promise<{ page: Page; cdp: CDPSession }> {
  stranger ??= await launchChromium('a11y-stranger');
  const page = stranger.pages()[0] ?? (await stranger.newPage());
  return { page, cdp: await stranger.newCDPSession(page) };
}

/** `latch request`, left waiting for a phone. */
const ask = (args: string[]): Promise<Ran> =>
  runLatch(machine, ['request', '--timeout', '300', ...args], { timeoutMs: 330_000 });

/** The number of lines a label's text takes, up to (not counting) its field. */
const textLines = (page: Page, selector: string) =>
  page.locator(selector).evaluate((label) => {
    const range = document.createRange();
    range.setStart(label, 0);
    range.setEndBefore(label.querySelector('input')!);
    const half = parseFloat(getComputedStyle(label).lineHeight) / 2;
    const tops = [...range.getClientRects()]
      .filter((rect) => rect.width > 0 && rect.height > 0)
      .map((rect) => rect.top)
      .sort((a, b) => a - b);
    // Boxes on one line (text, an inline-block word) start within half a line of each other.
    return tops.filter((top, index) => index === 0 || top - tops[index - 1]! > half).length;
  });

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

describe('contrast, measured as WCAG defines it', () => {
  it('computes the contrast ratio of known pairs, and finds the old dark palette’s failures', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
    // The failures issue 14 names: each under AA's 4.5:1.
    expect(contrastRatio('#ffffff', '#22c55e')).toBeCloseTo(2.28, 2);
    expect(contrastRatio('#ffffff', '#60a5fa')).toBeCloseTo(2.54, 2);
    expect(contrastRatio('#dc2626', '#111827')).toBeCloseTo(3.67, 2);
    expect(paletteFailures(OLD_DARK_PALETTE)).toEqual([
      '--red on --bg: 3.90 < 4.5',
      '--red on --card: 3.67 < 4.5',
      '--on-fill on --green-fill: 2.28 < 4.5',
      '--on-fill on --blue-fill: 2.54 < 4.5',
    ]);
  });

  it('draws every pair of the palette at AA contrast, in light and in dark', async () => {
    const { page, cdp } = await strangerPage();
    await page.goto(origin);
    for (const scheme of SCHEMES) {
      await cdp.send('Emulation.setEmulatedMedia', {
        features: [{ name: 'prefers-color-scheme', value: scheme }],
      });
      const palette = await page.evaluate((names) => {
        const style = getComputedStyle(document.documentElement);
        return Object.fromEntries(names.map((name) => [name, style.getPropertyValue(name).trim()]));
      }, PALETTE_NAMES);
      expect({ scheme, failures: paletteFailures(palette) }).toEqual({ scheme, failures: [] });
    }
    await cdp.send('Emulation.setEmulatedMedia', { features: [] });
  });
});

/**
 * The pairs styles.css draws: [foreground, background, the ratio AA asks]. 4.5:1 for text; 3:1
 * for what only has to be seen as a boundary (field edges, the focus ring, the panic button).
 */
const PAIRS: [string, string, number][] = [
  ...['--bg', '--card', '--code-bg', '--added-bg', '--removed-bg'].map((ground): [string, string, number] => [
    '--fg',
    ground,
    4.5,
  ]),
  ...['--muted', '--red', '--green', '--amber', '--blue'].flatMap((text) =>
    ['--bg', '--card'].map((ground): [string, string, number] => [text, ground, 4.5]),
  ),
  ...['--red-fill', '--red-fill-strong', '--green-fill', '--blue-fill', '--neutral-fill'].map(
    (fill): [string, string, number] => ['--on-fill', fill, 4.5],
  ),
  ['--field-line', '--bg', 3],
  ['--field-line', '--card', 3],
  ['--red-fill', '--bg', 3],
];
const PALETTE_NAMES = [...new Set(PAIRS.flatMap(([a, b]) => [a, b]))];

function paletteFailures(palette: Record<string, string>): string[] {
  return PAIRS.flatMap(([fg, bg, needed]) => {
    const ratio = contrastRatio(palette[fg]!, palette[bg]!);
    return ratio < needed ? [`${fg} on ${bg}: ${ratio.toFixed(2)} < ${needed}`] : [];
  });
}

/** The dark palette before issue 14, in the roles its colours played (white text on --green and --blue). */
const OLD_DARK_PALETTE: Record<string, string> = {
  '--bg': '#0b1120',
  '--fg': '#e2e8f0',
  '--muted': '#94a3b8',
  '--card': '#111827',
  '--code-bg': '#111827',
  '--red': '#dc2626',
  '--green': '#22c55e',
  '--amber': '#f59e0b',
  '--blue': '#60a5fa',
  '--red-fill': '#dc2626',
  '--red-fill-strong': '#991b1b',
  '--green-fill': '#22c55e',
  '--blue-fill': '#60a5fa',
  '--neutral-fill': '#475569',
  '--on-fill': '#ffffff',
  '--field-line': '#64748b',
  // The diff's tints came later: today's, so the old palette is judged on the colours it had.
  '--added-bg': '#14532d',
  '--removed-bg': '#7f1d1d',
};

describe('every screen, in light and dark, at 390 and 320 px: axe finds nothing serious', () => {
  it('the screens of a phone not yet paired: welcome, pair, a bad link, a failed pairing, scan', async () => {
    const { page, cdp } = await strangerPage();
    const problems: string[] = [];
    await page.goto(origin);
    await page.getByText('This phone is not paired yet.', { exact: false }).waitFor();
    problems.push(...(await audit(page, cdp, 'welcome')));

    await page.goto(pairingLink({ origin, secret: randomBytes(PAIRING_SECRET_BYTES) }));
    await page.getByRole('button', { name: 'Pair with Face ID' }).waitFor();
    problems.push(...(await audit(page, cdp, 'pair')));
    await page.getByRole('button', { name: 'Pair with Face ID' }).click();
    await page.getByRole('alert').getByText('This pairing code is not valid any more.').waitFor();
    problems.push(...(await audit(page, cdp, 'pair-failed')));

    await page.goto(origin); // from /pair, only the fragment would change: no new page
    await page.goto(`${origin}/pair#not-a-code`);
    await page.getByText(/This pairing link is not valid/).waitFor();
    problems.push(...(await audit(page, cdp, 'pair-bad-link')));

    // No camera in this browser: the scanner says so.
    await page.goto(`${origin}/scan`);
    await page.getByText('The camera is not available. Open the link latch pair prints instead.').waitFor();
    problems.push(...(await audit(page, cdp, 'scan')));
    expect(problems).toEqual([]);
  });

  it('pairing, then the home screen with nothing waiting', async () => {
    ({ browser: phoneA } = await rig.pairPhone('Phone A'));
    const problems = await auditPhone(phoneA, 'pair-done');
    await phoneA.page.goto(origin);
    await phoneA.page.getByText('Nothing is waiting.').waitFor();
    await phoneA.page.getByText(/^Armed/).waitFor();
    problems.push(...(await auditPhone(phoneA, 'home-empty')));
    expect(problems).toEqual([]);
  });

  it('requests: the list, a request, one with no details, a critical one to type, a result', async () => {
    const page = phoneA.page;
    const bare = ask(['--title', 'Publish the package']);
    const migrate = ask([
      '--title',
      'Run the database migration',
      '--detail',
      'npm run migrate -- --env=staging --steps=all\n(then restart the workers)',
      '--risk',
      'high',
    ]);
    const drop = ask([
      '--title',
      'Drop the production database',
      '--detail',
      'psql -c "DROP DATABASE orders_production;"',
      '--risk',
      'critical',
      '--target',
      'orders_production',
    ]);
    const problems: string[] = [];
    await page.goto(origin);
    await page.getByText('Waiting for you (3)').waitFor({ timeout: 30_000 });
    problems.push(...(await auditPhone(phoneA, 'home-requests')));

    await openPending(phoneA, origin, /Run the database migration/);
    await page.locator('.detail').getByText('npm run migrate', { exact: false }).waitFor();
    problems.push(...(await auditPhone(phoneA, 'request')));

    // An empty detail reads as empty, not as a box waiting for input.
    await openPending(phoneA, origin, /Publish the package/);
    await page.getByText(/^No details/).waitFor();
    expect(await page.locator('.detail').count()).toBe(0);
    problems.push(...(await auditPhone(phoneA, 'request-no-detail')));

    await openPending(phoneA, origin, /Drop the production database/);
    const field = page.locator('.confirm input');
    await field.waitFor();
    // The word to type stands out, and the label takes at most two lines at either width.
    expect(await page.locator('.confirm code').textContent()).toBe('orders_production');
    for (const { width, height } of SIZES) {
      await page.setViewportSize({ width, height });
      expect(await textLines(page, '.confirm'), `lines of the label at ${width} px`).toBeLessThanOrEqual(2);
    }
    await field.fill('orders_production');
    problems.push(...(await auditPhone(phoneA, 'request-critical')));

    await page.keyboard.press('Escape');
    await page.getByRole('status').getByText('Denied').waitFor();
    problems.push(...(await auditPhone(phoneA, 'result-denied')));
    for (const title of [/Run the database migration/, /Publish the package/]) {
      await openPending(phoneA, origin, title);
      await page.getByRole('button', { name: 'Deny', exact: true }).click();
      await page.getByRole('status').getByText('Denied').waitFor();
    }
    expect((await Promise.all([bare, migrate, drop])).map(({ code }) => code)).toEqual([1, 1, 1]);

    await page.goto(origin);
    await page.getByText('Nothing is waiting.').waitFor();
    await page.locator('.recent li').nth(2).waitFor();
    problems.push(...(await auditPhone(phoneA, 'home-recent')));
    expect(problems).toEqual([]);
  });

  it('the frozen state, which a resume clears at once, without a reload', async () => {
    const page = phoneA.page;
    await holdPanic(phoneA, origin);
    await page.getByText('FROZEN', { exact: true }).waitFor();
    await page.getByText('Frozen. Every agent is stopped.').waitFor();
    const problems = await auditPhone(phoneA, 'frozen');
    await page.getByRole('button', { name: 'Vote to resume (Face ID)' }).click();
    await page.getByText(/^Armed/).waitFor();
    // Nothing on screen says "frozen" any more: not the status, not the panic's notice.
    await expect.poll(() => page.getByText(/frozen/i).count()).toBe(0);
    expect((await runLatch(machine, ['status'])).code).toBe(0);
    expect(problems).toEqual([]);
  });
});

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
    // A conversation of its own: the requests above used up `latch request`'s pushes for the minute.
    const hook = startHook(
      machine,
      hookInput('PreToolUse', 'Bash', { command: 'rotate-keys --all' }, { session_id: 'push-check' }),
    );
    expect(await rig.pushService.waitForMessages(phoneB.pushId, 1, 20_000)).toHaveLength(1);
    await openPending(phoneB.browser, origin, /rotate-keys --all/);
    await phoneB.browser.page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect((await hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
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
    const page = phoneB!.browser.page;
    const banner = page.getByRole('status', { name: 'notifications' });
    await page.evaluate(() => sessionStorage.setItem('test.push', 'fail'));
    await page.goto(origin);
    await banner
      .getByText('The push service did not give this phone a subscription.')
      .waitFor({ timeout: 20_000 });
    expect(await banner.textContent()).toMatch(/^No notifications on this phone\./);
    const problems = await auditPhone(phoneB!.browser, 'home-no-notifications');

    await page.evaluate(() => sessionStorage.setItem('test.push', 'hold'));
    await page.goto(origin);
    await banner.getByText('The push service did not answer.').waitFor({ timeout: 60_000 });

    // Once the push service answers, the banner goes.
    await page.evaluate(() => (window as unknown as { __releasePush(): void }).__releasePush());
    await expect.poll(() => banner.count(), { timeout: 20_000 }).toBe(0);
    expect(problems).toEqual([]);
  });

  it('says so when notifications are not allowed, and turns them on from a tap', async () => {
    const { browser } = phoneB!;
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

describe('the update prompt', () => {
  it('offers the new version, readable in light and dark', async () => {
    const page = phoneA.page;
    await page.goto(origin);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    appendFileSync(join(app, 'sw.js'), '\n// the next version\n');
    await page.reload();
    await page
      .getByRole('status')
      .filter({ hasText: 'A new version of Latch is ready.' })
      .waitFor({ timeout: 30_000 });
    expect(await auditPhone(phoneA, 'update-prompt')).toEqual([]);
  });
});
