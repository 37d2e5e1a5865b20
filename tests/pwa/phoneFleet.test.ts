import type { Dialog } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PWA_BUDGET_BYTES, shippedJs } from '../../scripts/pwa-budget.ts';
import type { PairedBrowserPhone } from '../support/browserFlows.ts';
import type { DevicesJson } from '../../daemon/cli/commands/devices.ts';
import { keptOnPhone } from '../support/keptOnPhone.ts';
import { countFaceIdPrompts, offWhileOffline } from '../support/oneActionAtATime.ts';
import { auditLines, runLatch, withStore, type LatchMachine } from '../support/latchMachine.ts';
import { startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';
import { auditScreen, type ScreenFinding } from '../support/screenAudit.ts';

let rig: PhoneRig;
let origin: string;
let machine: LatchMachine;
let phones: PairedBrowserPhone[];

beforeAll(async () => {
  // Resuming takes both phones' votes.
  rig = await startPhoneRig({ name: 'pwa-fleet', relay: 'plain', quorum: 2, phones: ['Phone A', 'Phone B'] });
  ({ origin, machine, phones } = rig);
});

afterAll(async () => {
  await rig?.stop();
});

describe('the phone app', () => {
  it('has a lock-screen privacy setting, off until turned on', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    await browser.page.goto(`${origin}/devices`);
    const privacy = browser.page.getByRole('checkbox', { name: /Lock-screen privacy/ });
    await expect.poll(() => privacy.isEnabled()).toBe(true);
    expect(await privacy.isChecked()).toBe(false);
    await privacy.check();
    // Saved where the service worker reads it, before the reload that would cut the write short.
    await expect.poll(async () => (await keptOnPhone(browser.page))['lock-screen-privacy']).toBe('true');
    await browser.page.reload();
    await expect.poll(() => privacy.isChecked()).toBe(true);
    const found: ScreenFinding[] = [];
    expect(await auditScreen(browser.page, browser.cdp, 'devices-privacy', found)).toEqual([]);
    await privacy.uncheck();
  });

  it('follows a navigation made between the first screen showing and the app listening for it', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    const page = await browser.context.newPage();
    try {
      // The app's effects run a frame after its first render: a navigation in between (a tap, or
      // a notification the worker opens) must not be lost.
      await page.addInitScript(() => {
        const observer = new MutationObserver(() => {
          if (!document.querySelector('.screen')) return;
          observer.disconnect();
          history.pushState(null, '', '/devices');
          dispatchEvent(new PopStateEvent('popstate'));
        });
        observer.observe(document, { childList: true, subtree: true });
      });
      await page.goto(origin);
      await page.getByRole('heading', { name: 'Devices' }).waitFor();
    } finally {
      await page.close();
    }
  });

  it('freezes the fleet from one phone, needs both votes to resume, and refuses a second vote from the same phone', async () => {
    const [a, b] = phones as [(typeof phones)[0], (typeof phones)[0]];
    // On a page whose clock the test moves: a tap (pressed a tenth of a second), ten seconds, then a
    // hold (pressed a second). A freeze the tap set off would be sent before the hold starts; the
    // only one is sent after. (Its `ts` is relay time, not the page's moved clock: docs/protocol.md.)
    const clocked = await a.browser.context.newPage();
    try {
      await clocked.clock.install();
      let holding = false;
      const freezesSentHolding: boolean[] = [];
      clocked.on('request', (request) => {
        if (request.url().endsWith('/freeze')) freezesSentHolding.push(holding);
      });
      await clocked.goto(origin);
      const press = async (heldMs: number) => {
        await clocked.getByRole('button', { name: /Panic/ }).hover();
        await clocked.mouse.down();
        await clocked.clock.runFor(heldMs);
        await clocked.mouse.up();
      };
      await press(100);
      await clocked.clock.runFor(10_000);
      holding = true;
      await press(1_000);
      await clocked.getByText('FROZEN', { exact: true }).waitFor();
      expect(freezesSentHolding).toEqual([true]);
    } finally {
      await clocked.close();
    }
    await expect.poll(async () => (await runLatch(machine, ['status'])).code).toBe(1);
    await a.browser.page.goto(origin);
    await a.browser.page.getByText('Votes to resume: 0 of 2').waitFor();
    await a.browser.screenshot('frozen');

    const votes: { url: string; body: string }[] = [];
    a.browser.page.on('request', (request) => {
      if (request.url().endsWith('/resume'))
        votes.push({ url: request.url(), body: request.postData() ?? '' });
    });
    const voteButton = a.browser.page.getByRole('button', { name: 'Vote to resume (Face ID)' });
    // Offline, a vote could not reach the relay: its button is off until the network is back.
    await offWhileOffline(a.browser, [voteButton]);
    // A double tap votes once: one Face ID, one vote sent, and no "cancelled" racing the answer.
    const faceIdPrompts = await countFaceIdPrompts(a.browser);
    await voteButton.dblclick();
    await a.browser.page.getByText('Votes to resume: 1 of 2').waitFor();
    await a.browser.page.getByText('This phone has voted.').waitFor();
    expect([await faceIdPrompts(), votes.length]).toEqual([1, 1]);
    await a.browser.page.getByText('Your vote is counted.').waitFor();
    // The phone named the freeze by the id it computed from the envelope: the one the host holds.
    expect(JSON.parse(votes[0]!.body)).toMatchObject({
      freeze: withStore(machine, (store) => store.switchState().freeze),
    });
    // The app offers no second vote; the same vote sent again, straight to the relay, is refused
    // (its passkey counter has moved on; a fresh second vote is refused as already_used, see tests/relay).
    const again = await a.browser.page.request.post(votes[0]!.url, {
      data: votes[0]!.body,
      headers: { 'content-type': 'application/json' },
    });
    expect({
      status: again.status(),
      code: ((await again.json()) as { error: { code: string } }).error.code,
    }).toEqual({ status: 403, code: 'counter_not_increased' });
    expect((await runLatch(machine, ['status'])).code).toBe(1);

    await b.browser.page.goto(origin);
    await b.browser.page.getByRole('button', { name: 'Vote to resume (Face ID)' }).click();
    await b.browser.page.getByText(/^Armed/).waitFor();
    await expect.poll(async () => (await runLatch(machine, ['status'])).code).toBe(0);
    // Phone A, left on its home screen, sees the resume without a reload: no "Frozen" anywhere.
    await a.browser.page.getByText(/^Armed/).waitFor();
    await expect.poll(() => a.browser.page.getByText(/frozen/i).count()).toBe(0);
  });

  it('fits a 320 px wide screen without scrolling sideways, in dark mode too', async () => {
    const [{ browser }] = phones as [(typeof phones)[0]];
    await browser.page.setViewportSize({ width: 320, height: 640 });
    await browser.page.emulateMedia({ colorScheme: 'dark' });
    await browser.page.goto(origin);
    await browser.page.getByRole('button', { name: /Panic/ }).waitFor();
    expect(await browser.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
    expect(await browser.page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(
      'rgb(11, 17, 32)',
    );
    await browser.screenshot('home-320-dark');
    await browser.page.emulateMedia({ colorScheme: 'light' });
    await browser.page.setViewportSize({ width: 390, height: 844 });
  });

  it('lists the fleet’s phones and hosts, and revokes a phone, which is then locked out there and on the host', async () => {
    const [a, b] = phones as [(typeof phones)[0], (typeof phones)[0]];
    await a.browser.page.goto(`${origin}/devices`);
    await a.browser.page.getByText('Phone A (this phone)').waitFor();
    await a.browser.page.getByText('test-box').waitFor();
    const phoneBRow = a.browser.page.getByRole('listitem').filter({ hasText: 'Phone B' });
    const revoke = phoneBRow.getByRole('button', { name: 'Revoke' });
    // Offline, neither a rename nor a revoke could reach the relay: both are off meanwhile.
    await offWhileOffline(a.browser, [phoneBRow.getByRole('button', { name: 'Rename' }), revoke]);
    // A double tap revokes once: one question, one Face ID, one call to the relay.
    const questions: string[] = [];
    const accept = (dialog: Dialog) => {
      questions.push(dialog.message());
      void dialog.accept();
    };
    a.browser.page.on('dialog', accept);
    const revokes: string[] = [];
    a.browser.page.on('request', (request) => {
      if (request.method() === 'DELETE') revokes.push(request.url());
    });
    const faceIdPrompts = await countFaceIdPrompts(a.browser);
    try {
      await revoke.dblclick();
      await a.browser.page.getByText('Phone B (revoked)').waitFor();
      await a.browser.page.getByRole('status').getByText('Revoked Phone B.').waitFor();
    } finally {
      a.browser.page.off('dialog', accept);
    }
    expect([questions.length, await faceIdPrompts(), revokes.length]).toEqual([1, 1, 1]);
    await b.browser.page.goto(origin);
    await b.browser.page.getByText('This phone is not paired with this fleet, or no longer is.').waitFor();
    // It sees none of the fleet's requests: it does not say none are waiting, and its PANIC says why it is off.
    expect(await b.browser.page.getByText(/Nothing is waiting|Nothing decided yet/).count()).toBe(0);
    const panic = b.browser.page.getByRole('button', { name: /Panic/ });
    expect([await panic.isDisabled(), await panic.textContent()]).toEqual([
      true,
      'Panic no fleet knows this phone',
    ]);
    // The host checked Phone A's Face ID assertion itself before it stopped trusting Phone B.
    const devices = async () =>
      (JSON.parse((await runLatch(machine, ['devices', '--json'])).stdout) as DevicesJson).devices;
    await expect
      .poll(async () => (await devices()).map(({ name, revoked }) => ({ name, revoked })))
      .toEqual([
        { name: 'Phone A', revoked: false },
        { name: 'Phone B', revoked: true },
      ]);
    const [phoneA, phoneB] = await devices();
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'device_revoked',
        device: phoneB!.id,
        by: 'phone',
        phone: phoneA!.id,
      }),
    );
  });

  it(`ships at most ${PWA_BUDGET_BYTES / 1024} KB of JavaScript, gzipped`, () => {
    const total = shippedJs().reduce((sum, { gzipped }) => sum + gzipped, 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(PWA_BUDGET_BYTES);
  });
});
