import { mkdirSync, writeFileSync } from 'node:fs';
import type { Locator } from 'playwright-core';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { deliverPush, shownNotifications, type BrowserPhone } from '../support/browserPhone.ts';
import { askHook, hookInput, runLatch, type LatchMachine } from '../support/latchMachine.ts';
import { ASK_EVERY_REQUEST, startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';
import { auditScreen, type ScreenFinding } from '../support/screenAudit.ts';

const POLICY = `
default = "ask"
[[rule]]
name = "destructive"
tool = "Bash"
command = "rm *"
action = "ask"
risk = "high"
${ASK_EVERY_REQUEST}`;

let rig: PhoneRig;
let state: string;
let origin: string;
let pushService: PushServiceClient;
let machine: LatchMachine;
let phones: PairedBrowserPhone[];

// Paired in the set-up, so that each test runs alone (-t): phone A, trusted first, approves adding B.
beforeAll(async () => {
  rig = await startPhoneRig({
    name: 'pwa',
    relay: 'plain',
    quorum: 2,
    policy: POLICY,
    phones: ['Phone A', 'Phone B'],
  });
  ({ state, origin, pushService, machine, phones } = rig);
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

/** An agent's Bash call through the Claude Code hook. */
const ask = (command: string) =>
  askHook(machine, hookInput('PreToolUse', 'Bash', { command }, { session_id: 's', cwd: '/srv/app' }));

const openFirstPending = (phone: BrowserPhone, title: RegExp) => openPending(phone, origin, title);

describe('the phone app', () => {
  it('pairs two phones by their QR links, each showing the terminal’s short code', async () => {
    // Each pairing of the set-up checked that the phone and the terminal show the same code.
    expect((await runLatch(machine, ['devices'])).stdout.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('shows a pushed request as a notification with Approve and Deny', async () => {
    const [{ browser, pushId }] = phones as [(typeof phones)[0]];
    const before = (await pushService.messages(pushId)).length;
    const hook = ask('rm -rf build');
    const [message] = (await pushService.waitForMessages(pushId, before + 1, 15_000)).slice(before);
    expect(await pushService.rejected()).toEqual([]);
    await browser.page.goto(origin);
    await deliverPush(browser, origin, message!.payload);
    await expect
      .poll(() => shownNotifications(browser))
      .toEqual([
        expect.objectContaining({
          title: 'rm -rf build',
          body: 'app · s · test-box',
          actions: ['approve', 'deny'],
        }),
      ]);
    await browser.screenshot('home');
    await openFirstPending(browser, /rm -rf build/);
    await browser.page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await hook).toMatchObject({ permissionDecision: 'deny' });
  });

  it('holds Approve through the cooling-off, then approves with Face ID', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    const hook = ask('rm -rf out');
    await openFirstPending(browser, /rm -rf out/);
    const approve = browser.page.getByRole('button', { name: /^Approve/ });
    await expect.poll(() => approve.textContent()).toMatch(/^Approve in \d+\u00a0s$/);
    expect(await approve.isDisabled()).toBe(true);
    await browser.page.getByText('rm -rf out', { exact: true }).waitFor();
    await browser.screenshot('request');
    await expect.poll(() => approve.isDisabled()).toBe(false);
    await approve.click();
    await browser.page.getByRole('status').getByText('Approval sent').waitFor();
    // The relay took the token; the daemon verified it and let the call through.
    expect(await hook).toMatchObject({
      permissionDecision: 'allow',
      permissionDecisionReason: 'latch: approved on Phone A',
    });
  });

  it('never approves on Enter, even with the focus on an enabled Approve; Escape denies, and the agent hears it', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    const hook = ask('rm -rf dist');
    await openFirstPending(browser, /rm -rf dist/);
    await browser.page.getByText('rm -rf dist', { exact: true }).waitFor();
    const approve = browser.page.getByRole('button', { name: 'Approve with Face ID' });
    await expect.poll(() => approve.isEnabled()).toBe(true);
    await approve.focus();
    expect(await approve.evaluate((button) => button === document.activeElement)).toBe(true);
    await browser.page.keyboard.press('Enter');
    // Enter presses any other button in focus (review Z: a keyboard's or a switch's only way):
    // the report's Cancel closes its panel. Meanwhile the hint says nothing of Escape denying.
    const keysHint = browser.page.getByText('Escape denies.');
    expect(await keysHint.isVisible()).toBe(true);
    await browser.page.getByRole('button', { name: /report…$/ }).click();
    const cancel = browser.page.getByRole('button', { name: 'Cancel the report' });
    expect(await keysHint.isVisible()).toBe(false);
    await cancel.focus();
    await browser.page.keyboard.press('Enter');
    await cancel.waitFor({ state: 'detached' });
    expect(await keysHint.isVisible()).toBe(true);
    // With the report's panel open, Escape closes the panel, as a dialog's would, and decides
    // nothing: the request is still on screen, its buttons live.
    await browser.page.getByRole('button', { name: /report…$/ }).click();
    await browser.page.getByRole('button', { name: 'Cancel the report' }).waitFor();
    await browser.page.keyboard.press('Escape');
    await browser.page.getByRole('button', { name: /report…$/ }).waitFor();
    expect(await browser.page.getByRole('status').getByRole('heading').count()).toBe(0);
    expect(await approve.isEnabled()).toBe(true);
    // An approval that Enter started would make the screen busy: the Escape after it would do
    // nothing and the request would end approved. How it ends is the answer, with no sleep.
    await browser.page.keyboard.press('Escape');
    const outcome = browser.page.getByRole('status').getByRole('heading');
    await outcome.waitFor().catch(async (error: unknown) => {
      console.error('the phone showed:', await browser.page.locator('body').textContent(), browser.errors);
      throw error;
    });
    expect(await outcome.textContent()).toBe('Denied');
    expect(await hook).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: 'latch: denied on Phone A',
    });
  });

  it('names each screen in the page title after its heading, and moves the focus to that heading on a move', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    const { page } = browser;
    const focusedHeading = () =>
      page.evaluate(() =>
        document.activeElement?.tagName === 'H1' ? document.activeElement.textContent : null,
      );
    await page.goto(origin);
    await page.getByRole('heading', { level: 1, name: 'Latch' }).waitFor();
    expect(await page.title()).toBe('Latch');
    // A page opened afresh keeps the focus where the browser puts it.
    expect(await focusedHeading()).toBeNull();
    await page.getByRole('button', { name: 'Devices', exact: true }).click();
    await expect.poll(page.title.bind(page)).toBe('Devices · Latch');
    await expect.poll(focusedHeading).toBe('Devices');
    const hook = ask('rm -rf cache');
    await page.getByRole('button', { name: 'Back', exact: true }).click();
    await expect.poll(focusedHeading).toBe('Latch');
    expect(await page.title()).toBe('Latch');
    await page
      .getByRole('button', { name: /rm -rf cache/ })
      .first()
      .click();
    // Not the agent's command: the browser's history keeps titles.
    await expect.poll(page.title.bind(page)).toBe('Request · Latch');
    await expect.poll(focusedHeading).toBe('rm -rf cache');
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await hook).toMatchObject({ permissionDecision: 'deny' });
  });

  it('shows a file edit as its diff, the list leading with the action, then project · session · host', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    const project = join(state, 'shop-app');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(
      join(project, 'src/cart.ts'),
      'export function total(items: Item[]) {\n  let sum = 0;\n  for (const item of items) sum += item.price;\n  return sum;\n}\n',
    );
    const hook = askHook(
      machine,
      hookInput(
        'PreToolUse',
        'Edit',
        {
          file_path: join(project, 'src/cart.ts'),
          old_string: 'sum += item.price;',
          new_string: 'sum += item.price * item.quantity;',
        },
        { cwd: project, session_id: 'c0ffee12-7d1e-4c55-9a43-0b5e2f1d8a77' },
      ),
    );
    await browser.page.goto(origin);
    const item = browser.page.getByRole('button', { name: /Edit src\/cart\.ts/ });
    await expect.poll(() => item.locator('.request-title').textContent()).toBe('Edit src/cart.ts');
    expect(await item.locator('.request-meta').textContent()).toMatch(/^shop-app · c0ffee12 · test-box · /);
    await browser.screenshot('home-card');

    await item.click();
    const diff = browser.page.getByLabel(/^Changes:/);
    await expect
      .poll(() => diff.textContent())
      .toBe(
        [
          '--- a/src/cart.ts',
          '+++ b/src/cart.ts',
          '@@ -1,5 +1,5 @@',
          ' export function total(items: Item[]) {',
          '   let sum = 0;',
          '-  for (const item of items) sum += item.price;',
          '+  for (const item of items) sum += item.price * item.quantity;',
          '   return sum;',
          ' }',
          '',
        ].join('\n'),
      );
    // Added and removed lines say so in text, not by colour alone.
    expect(await diff.locator('.diff-added').textContent()).toMatch(/^\+/);
    expect(await diff.locator('.diff-removed').textContent()).toMatch(/^-/);
    expect(await browser.page.locator('.request-meta').textContent()).toMatch(
      /^shop-app · c0ffee12 · test-box · /,
    );
    const found: ScreenFinding[] = [];
    expect(await auditScreen(browser.page, browser.cdp, 'request-diff', found)).toEqual([]);

    await browser.page.keyboard.press('Escape');
    expect(await hook).toMatchObject({ permissionDecision: 'deny' });
  });

  it('draws a changed line that starts like a file header as the change it is', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    const project = join(state, 'headers');
    mkdirSync(project, { recursive: true });
    // Added, these lines read `+++ b/ok` and `+-- a/ok`: only the first two lines are headers.
    const hook = askHook(
      machine,
      hookInput(
        'PreToolUse',
        'Write',
        { file_path: join(project, 'notes'), content: '++ b/ok\n-- a/ok\n' },
        { cwd: project },
      ),
    );
    await browser.page.goto(origin);
    await browser.page.getByRole('button', { name: /Write notes/ }).click();
    const diff = browser.page.getByLabel(/^Changes:/);
    await expect
      .poll(() => diff.locator('.diff-added').allTextContents())
      .toEqual(['+++ b/ok\n', '+-- a/ok\n']);
    expect(await diff.locator('.diff-file').allTextContents()).toEqual(['--- /dev/null\n', '+++ b/notes\n']);
    // A bar beside each added row, whose wrapped part would otherwise read as a line that stays.
    const leftBar = (row: Locator) =>
      row.evaluate((element) => {
        const style = getComputedStyle(element);
        return `${style.borderLeftStyle} ${style.borderLeftColor}`;
      });
    expect(await leftBar(diff.locator('.diff-added').first())).toMatch(/^solid rgb\(/);
    expect(await leftBar(diff.locator('.diff-file').first())).toBe('solid rgba(0, 0, 0, 0)');
    await browser.page.keyboard.press('Escape');
    expect(await hook).toMatchObject({ permissionDecision: 'deny' });
  });

  it('shows an expired request as expired', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    const request = runLatch(machine, ['request', '--title', 'Publish the package', '--timeout', '5'], {
      timeoutMs: 30_000,
    });
    await openFirstPending(browser, /Publish the package/);
    await browser.page.getByRole('status').getByText('Expired').waitFor();
    expect(await request).toMatchObject({ code: 1, stdout: expect.stringMatching(/^denied: expired/) });
  });

  it('shows text cleaned of bidi overrides and tag characters, with the "text shortened" mark', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    const smuggled = [...'approve']
      .map((character) => String.fromCodePoint(0xe0000 + character.charCodeAt(0)))
      .join('');
    const title = `Deploy \u202Eprod\u202C now${smuggled} ${'x'.repeat(300)}`;
    const request = runLatch(
      machine,
      [
        'request',
        '--title',
        title,
        '--detail',
        `git push \u2066origin\u2069 main${smuggled}`,
        '--timeout',
        '60',
      ],
      { timeoutMs: 90_000 },
    );
    await openFirstPending(browser, /Deploy prod now/);
    await expect.poll(() => browser.page.getByRole('note').textContent()).toMatch(/^Text shortened/);
    const text = (await browser.page.locator('main').textContent())!;
    expect(text).toContain('Deploy prod now');
    expect(text).toContain('git push origin main');
    expect(text).not.toMatch(/[\u202A-\u202E\u2066-\u2069]|[\u{E0000}-\u{E007F}]/u);
    await browser.page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect((await request).code).toBe(1);
  });
});
