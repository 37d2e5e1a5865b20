import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelayProcess } from '../../scripts/lib/relayProcess.ts';
import { launchChromium } from '../support/browserPhone.ts';
import { startRelayServingAppCopy } from '../support/relayServingAppCopy.ts';

const state = mkdtempSync(join(tmpdir(), 'latch-update-'));
/** The copy of the built app that this test's relay serves, so the test can ship a new version. */
let app: string;
let relay: RelayProcess;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  ({ relay, app } = await startRelayServingAppCopy(state));
  context = await launchChromium('update');
  page = context.pages()[0] ?? (await context.newPage());
});

afterAll(async () => {
  await context?.close();
  await relay?.stop();
  rmSync(state, { recursive: true, force: true });
});

const banner = () => page.getByRole('status').filter({ hasText: 'A new version of Latch is ready.' });

describe('the update prompt', () => {
  it('offers a reload when a new version is waiting, and the reload brings the new version in', async () => {
    const origin = `http://localhost:${relay.port}`;
    await page.goto(origin);
    await page.evaluate(() => navigator.serviceWorker.ready);
    // Once the service worker controls the page, a new one has to wait for it.
    await page.reload();
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    expect(await banner().count()).toBe(0);

    appendFileSync(join(app, 'sw.js'), '\n// the next version\n');
    await page.reload();
    await banner().waitFor({ timeout: 30_000 });

    const reloaded = page.waitForEvent('load', { timeout: 30_000 });
    await banner().getByRole('button', { name: 'Reload' }).click();
    await reloaded;
    await page.waitForFunction(async () => {
      const registration = await navigator.serviceWorker.getRegistration();
      return registration?.waiting === null && navigator.serviceWorker.controller !== null;
    });
    expect(await banner().count()).toBe(0);
  });
});
