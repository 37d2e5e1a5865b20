import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvePending, holdPanic } from '../support/browserFlows.ts';
import type { BrowserPhone } from '../support/browserPhone.ts';
import { askHook, hookInput, runLatch } from '../support/latchMachine.ts';
import { ASK_EVERY_BASH_CALL, startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';

/**
 * A phone whose clock is 5 minutes off the relay's (docs/security.md#clocks). The relay takes
 * signed calls only within ±60 s of its own clock; the app signs with the relay's time, learnt
 * from its answers, so the phone still approves and still freezes the fleet. The phone's clock is
 * moved in the page, by the skew the test keeps in the page's storage.
 */
const SKEW_MS = 5 * 60_000;
const SKEW_KEY = 'test-clock-skew-ms';

let rig: PhoneRig;

beforeAll(async () => {
  rig = await startPhoneRig({
    name: 'phone-clock',
    relay: 'plain',
    policy: ASK_EVERY_BASH_CALL,
    phones: ['Phone A'],
  });
  const [{ browser }] = rig.phones as [(typeof rig.phones)[0]];
  await browser.context.addInitScript({
    content: `{ const realNow = Date.now; Date.now = () => {
      let skew = 0;
      try { skew = Number(localStorage.getItem('${SKEW_KEY}')) || 0; } catch { /* a page with no storage */ }
      return realNow() + skew;
    }; }`,
  });
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

/** Moves the phone's clock, and checks the page's clock moved. */
async function setPhoneClock(browser: BrowserPhone, skewMs: number): Promise<void> {
  await browser.page.goto(rig.origin);
  await browser.page.evaluate(({ key, skew }) => localStorage.setItem(key, skew), {
    key: SKEW_KEY,
    skew: String(skewMs),
  });
  await browser.page.reload();
  const pageSkew = (await browser.page.evaluate(() => Date.now())) - Date.now();
  expect(Math.abs(pageSkew - skewMs)).toBeLessThan(30_000);
}

const hostStatus = async () => (await runLatch(rig.machine, ['status'])).code;

describe('a phone whose clock is 5 minutes off the relay’s', () => {
  for (const [name, skew] of [
    ['ahead', SKEW_MS],
    ['behind', -SKEW_MS],
  ] as const) {
    it(`${name}: approves a call, which runs, and its panic freezes the host`, async () => {
      const [{ browser }] = rig.phones as [(typeof rig.phones)[0]];
      await setPhoneClock(browser, skew);
      const command = `rm -rf build-${name}`;
      const hook = askHook(rig.machine, hookInput('PreToolUse', 'Bash', { command }));
      await approvePending(browser, rig.origin, new RegExp(command));
      expect(await hook).toMatchObject({ permissionDecision: 'allow' });

      await holdPanic(browser, rig.origin);
      await expect.poll(hostStatus, { timeout: 30_000 }).toBe(1);
      await browser.screenshot(`clock-${name}-frozen`);
      // Resuming is a passkey vote, which carries no time: the next test starts armed.
      await browser.page.getByRole('button', { name: 'Vote to resume (Face ID)' }).click();
      await expect.poll(hostStatus, { timeout: 30_000 }).toBe(0);
    }, 120_000);
  }
});
