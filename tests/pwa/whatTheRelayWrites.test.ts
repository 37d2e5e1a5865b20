import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdPanic, openPending, type PairedBrowserPhone } from '../support/browserFlows.ts';
import { askHook, hookInput, type LatchMachine } from '../support/latchMachine.ts';
import { ASK_EVERY_BASH_CALL, startPhoneRig, type PhoneRig } from '../support/phoneRig.ts';

// The relay is never trusted (docs/security.md): what it writes is shown as its own, never as the
// app's words, and what the app says of a failure names a next step. A route rewriting the relay's
// answers is what a hostile relay can send (a phone walk).

let rig: PhoneRig;
let origin: string;
let machine: LatchMachine;
let phone: PairedBrowserPhone;

beforeAll(async () => {
  rig = await startPhoneRig({
    name: 'pwa-relay-writes',
    relay: 'plain',
    policy: ASK_EVERY_BASH_CALL,
    phones: ['Phone A'],
  });
  ({ origin, machine } = rig);
  [phone] = rig.phones as [PairedBrowserPhone];
}, 180_000);

afterAll(async () => {
  await rig?.stop();
});

const PHISHING = 'latch now needs re-approval: open latch-verify.example and sign in with your Apple ID';

/** The relay's refusal of every call to paths matching `glob`, with `status` and `body`. */
const refuse = (page: Page, glob: string, status: number, body = '') =>
  page.route(glob, (route: Route) =>
    route.fulfill({ status, body, ...(body ? { contentType: 'application/json' } : {}) }),
  );

const refusal = (code: string, message: string) => JSON.stringify({ error: { code, message } });

describe('what the relay writes', () => {
  it('quotes a refusal the relay wrote as the relay’s, on the card and on the home screen, never as the app’s sentence', async () => {
    const { page } = phone.browser;
    const hook = askHook(machine, hookInput('PreToolUse', 'Bash', { command: 'rm -rf quoted' }));
    await openPending(phone.browser, origin, /rm -rf quoted/);
    await refuse(page, '**/decision', 403, refusal('policy_update', PHISHING));
    await page.getByRole('button', { name: 'Approve with Face ID' }).click();
    await page.getByRole('status').getByRole('heading', { name: 'Not sent' }).waitFor();
    expect(await page.getByRole('status').textContent()).toBe(`Not sentThe relay said: “${PHISHING}”`);
    await page.unroute('**/decision');

    await refuse(
      page,
      '**/v1/fleets/*/state',
      403,
      refusal('fleet_moved', 'scan the code at latch-verify.example'),
    );
    await page.goto(origin);
    await page
      .getByText('The relay said: “scan the code at latch-verify.example”', { exact: true })
      .waitFor();
    await page.unroute('**/v1/fleets/*/state');

    await openPending(phone.browser, origin, /rm -rf quoted/);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await hook).toMatchObject({ permissionDecision: 'deny' });
  });

  it('says what to do when the relay fails with no refusal of its own: look whether it went through, or wait a minute', async () => {
    const { page } = phone.browser;
    const hook = askHook(machine, hookInput('PreToolUse', 'Bash', { command: 'rm -rf failing' }));
    const approveAnswered = async (status: number) => {
      await openPending(phone.browser, origin, /rm -rf failing/);
      await refuse(page, '**/decision', status);
      await page.getByRole('button', { name: 'Approve with Face ID' }).click();
      await page.getByRole('status').getByRole('heading', { name: 'Not sent' }).waitFor();
      await page.unroute('**/decision');
      return page.getByRole('status').textContent();
    };
    expect(await approveAnswered(500)).toBe(
      'Not sentThe relay failed: check whether it went through, then try again.',
    );
    expect(await approveAnswered(429)).toBe('Not sentToo many requests: wait a minute, then try again.');
    await openPending(phone.browser, origin, /rm -rf failing/);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect(await hook).toMatchObject({ permissionDecision: 'deny' });
  });

  it('shows the reason the signed freeze gives, not the one the relay writes beside it', async () => {
    const { page } = phone.browser;
    await holdPanic(phone.browser, origin);
    await page.getByText('FROZEN', { exact: true }).waitFor();
    // The relay's unsigned `reason` rewritten; its signed envelope (reason "panic button") kept.
    await page.route('**/v1/fleets/*/state', async (route) => {
      const answer = await route.fetch();
      const state = (await answer.json()) as Record<string, unknown>;
      await route.fulfill({
        response: answer,
        json: { ...state, reason: 'Latch support: this freeze is a drill. Approve the waiting request.' },
      });
    });
    await page.goto(origin);
    const frozen = page.getByRole('alert').filter({ hasText: 'FROZEN' });
    await frozen.waitFor();
    expect(await frozen.textContent()).toContain('FROZEN, reason given: panic button');
    expect(await page.locator('main').textContent()).not.toContain('drill');
    await page.unroute('**/v1/fleets/*/state');
    await page.getByRole('button', { name: 'Vote to resume (Face ID)' }).click();
    await page.getByText('Armed: agents run under your policy.').waitFor();
  });
});
