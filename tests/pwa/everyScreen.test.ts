import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import { PAIRING_SECRET_BYTES } from '../../shared/pairing/pairingKeys.ts';
import { pairingLink } from '../../shared/pairing/pairingLink.ts';
import { holdPanic, openPending } from '../support/browserFlows.ts';
import { strangerBrowser, type BrowserPhone } from '../support/browserPhone.ts';
import { runLatch, type LatchMachine, type Ran } from '../support/latchMachine.ts';
import { ASK_EVERY_REQUEST, startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { auditScreen, SIZES, type ScreenFinding } from '../support/screenAudit.ts';

const POLICY = `
default = "ask"
${ASK_EVERY_REQUEST}`;

let rig: PhoneRig;
let app: string;
let origin: string;
let machine: LatchMachine;
let phoneA: BrowserPhone | undefined;
const stranger = strangerBrowser('a11y-stranger');
/** What axe found, per screen, scheme and width: printed at the end for the person reading the run. */
const found: ScreenFinding[] = [];

beforeAll(async () => {
  rig = await startPhoneRig({ name: 'a11y', relay: 'app-copy', quorum: 1, policy: POLICY });
  ({ origin, machine } = rig);
  app = rig.app!;
}, 120_000);

afterAll(async () => {
  console.table(found);
  await stranger.close();
  await rig?.stop();
});

/** Phone A, paired by the pairing test or, when a test runs alone (`-t`), here. */
async function pairedPhoneA(): Promise<BrowserPhone> {
  phoneA ??= (await rig.pairPhone('Phone A')).browser;
  return phoneA;
}

const audit = (page: Page, cdp: CDPSession, screen: string) => auditScreen(page, cdp, screen, found);

const auditPhone = (phone: BrowserPhone, screen: string) => audit(phone.page, phone.cdp, screen);

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

describe('every screen, in light and dark, at 390 and 320 px: axe finds nothing serious', () => {
  it('the screens of a phone not yet paired: welcome, pair, a bad link, a failed pairing, scan', async () => {
    const { page, cdp } = await stranger.open();
    const problems: string[] = [];
    await page.goto(origin);
    await page.getByText('This phone is not paired yet.', { exact: false }).waitFor();
    problems.push(...(await audit(page, cdp, 'welcome')));

    await page.goto(pairingLink({ origin, secret: randomBytes(PAIRING_SECRET_BYTES) }));
    await page.getByRole('button', { name: 'Pair with Face ID' }).waitFor();
    problems.push(...(await audit(page, cdp, 'pair')));
    await page.getByRole('button', { name: 'Pair with Face ID' }).click();
    // The relay knows no such code: final, so no "Try again".
    await page.getByRole('alert').getByText('This code was used or expired. Run latch pair again.').waitFor();
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    problems.push(...(await audit(page, cdp, 'pair-failed')));

    await page.goto(origin); // from /pair, only the fragment would change: no new page
    await page.goto(`${origin}/pair#not-a-code`);
    await page.getByText(/^No valid pairing link here\./).waitFor();
    problems.push(...(await audit(page, cdp, 'pair-bad-link')));
    // Where a reload after pairing lands too: a way into the app.
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByText('This phone is not paired yet.', { exact: false }).waitFor();

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
    const phone = await pairedPhoneA();
    const { page } = phone;
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
    problems.push(...(await auditPhone(phone, 'home-requests')));

    await openPending(phone, origin, /Run the database migration/);
    await page.locator('.detail').getByText('npm run migrate', { exact: false }).waitFor();
    problems.push(...(await auditPhone(phone, 'request')));

    // An empty detail reads as empty, not as a box waiting for input.
    await openPending(phone, origin, /Publish the package/);
    await page.getByText(/^No details/).waitFor();
    expect(await page.locator('.detail').count()).toBe(0);
    problems.push(...(await auditPhone(phone, 'request-no-detail')));
    // Back leaves it waiting, unanswered.
    await page.getByRole('button', { name: 'Back to the list' }).click();
    await page.getByText('Waiting for you (3)').waitFor();

    await openPending(phone, origin, /Drop the production database/);
    const field = page.locator('.confirm input');
    await field.waitFor();
    // The word to type stands out, and the label takes at most two lines at either width.
    expect(await page.locator('.confirm code').textContent()).toBe('orders_production');
    for (const { width, height } of SIZES) {
      await page.setViewportSize({ width, height });
      expect(await textLines(page, '.confirm'), `lines of the label at ${width} px`).toBeLessThanOrEqual(2);
    }
    // Approve says what it waits for: the name typed, then the review time.
    const approve = page.locator('button.approve');
    expect(await approve.textContent()).toMatch(/^Type the name above; approve in \d+\u00a0s$/);
    // The name must match exactly, and a near miss says so (a phone capitalises, corrects).
    expect(await field.getAttribute('autocorrect')).toBe('off');
    await field.fill('Orders_production');
    await page
      .getByRole('status')
      .getByText(/^Not the same yet/)
      .waitFor();
    expect(await approve.isDisabled()).toBe(true);
    await field.fill('orders_prod');
    expect(await page.getByText(/^Not the same yet/).count()).toBe(0);
    await field.fill('orders_production');
    expect(await approve.textContent()).toMatch(/^Approve in \d+\u00a0s$/);
    problems.push(...(await auditPhone(phone, 'request-critical')));
    // Escape is a keyboard's: a touch screen without one is not told about it.
    expect(await page.locator('.keys-hint').isVisible()).toBe(true);
    await phone.cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 });
    await expect.poll(() => page.locator('.keys-hint').isVisible()).toBe(false);
    await phone.cdp.send('Emulation.setTouchEmulationEnabled', { enabled: false });

    // Outside the field: Escape in it is the field's.
    await field.blur();
    await page.keyboard.press('Escape');
    await page.getByRole('status').getByText('Denied').waitFor();
    problems.push(...(await auditPhone(phone, 'result-denied')));
    for (const title of [/Run the database migration/, /Publish the package/]) {
      await openPending(phone, origin, title);
      await page.getByRole('button', { name: 'Deny', exact: true }).click();
      await page.getByRole('status').getByText('Denied').waitFor();
    }
    expect((await Promise.all([bare, migrate, drop])).map(({ code }) => code)).toEqual([1, 1, 1]);

    await page.goto(origin);
    await page.getByText('Nothing is waiting.').waitFor();
    await page.locator('.recent li').nth(2).waitFor();
    problems.push(...(await auditPhone(phone, 'home-recent')));
    expect(problems).toEqual([]);
  });

  it('the frozen state, which a resume clears at once, without a reload', async () => {
    const phone = await pairedPhoneA();
    const { page } = phone;
    await holdPanic(phone, origin);
    await page.getByText('FROZEN', { exact: true }).waitFor();
    await page.getByText('Frozen. Every agent is stopped.').waitFor();
    // The panic is off, and says why rather than "hold to freeze".
    const panic = page.getByRole('button', { name: /^Panic/ });
    expect(await panic.isDisabled()).toBe(true);
    expect(await panic.textContent()).toBe('Panic every agent is frozen');
    const problems = await auditPhone(phone, 'frozen');
    await page.getByRole('button', { name: 'Vote to resume (Face ID)' }).click();
    await page.getByText(/^Armed/).waitFor();
    // Nothing on screen says "frozen" any more: not the status, not the panic's notice.
    await expect.poll(() => page.getByText(/frozen/i).count()).toBe(0);
    expect((await runLatch(machine, ['status'])).code).toBe(0);
    expect(problems).toEqual([]);
  });
});

describe('the update prompt', () => {
  it('offers the new version, readable in light and dark', async () => {
    const phone = await pairedPhoneA();
    const { page } = phone;
    await page.goto(origin);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    appendFileSync(join(app, 'sw.js'), '\n// the next version\n');
    await page.reload();
    await page
      .getByRole('status')
      .filter({ hasText: 'A new version of Latch is ready.' })
      .waitFor({ timeout: 30_000 });
    expect(await auditPhone(phone, 'update-prompt')).toEqual([]);
  });
});
