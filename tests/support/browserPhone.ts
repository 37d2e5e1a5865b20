import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import type { PushSubscriptionJson } from '../../shared/messages/common.ts';
import { pushMessageSchema } from '../../shared/messages/pushMessages.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { findChromium } from './findChromium.ts';

/** Where screenshots go: git-ignored, looked at after a run. */
export const TEST_OUTPUT = new URL('../../test-output/', import.meta.url).pathname;

/**
 * A phone, played by Debian's Chromium: a fresh profile, a CDP virtual authenticator standing in
 * for Face ID (user verification on), notifications granted, and, since no push service exists
 * here, a push subscription that points at the local push-service stand-in.
 */
export interface BrowserPhone {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  /** Uncaught errors and console errors of the page, for failing tests to show. */
  errors: string[];
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Chromium (findChromium), headless, phone-sized, with a fresh profile; `args` adds flags (a fake
 * camera). Its waits give up after a minute: a hang detector, generous for a loaded CI machine.
 */
export async function launchChromium(name: string, args: string[] = []): Promise<BrowserContext> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('no Chromium found: install chromium, or set CHROMIUM_PATH');
  const profile = mkdtempSync(join(tmpdir(), `latch-phone-${name}-`));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 390, height: 844 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
  context.setDefaultTimeout(60_000);
  return context;
}

/** A browser never paired with anything, launched on first use: the screens a stranger sees. */
export function strangerBrowser(name: string): {
  open(): Promise<{ page: Page; cdp: CDPSession }>;
  close(): Promise<void>;
} {
  let context: BrowserContext | undefined;
  return {
    open: async () => {
      context ??= await launchChromium(name);
      const page = context.pages()[0] ?? (await context.newPage());
      return { page, cdp: await context.newCDPSession(page) };
    },
    close: async () => context?.close(),
  };
}

export async function launchPhone(
  origin: string,
  subscription: PushSubscriptionJson,
  name: string,
): Promise<BrowserPhone> {
  const context = await launchChromium(name);
  await context.grantPermissions(['notifications'], { origin });
  // PushManager.subscribe cannot succeed without a push service: the test gives the page one.
  // Given as text: a function would be sent as its source, which tsx (the benchmarks) rewrites
  // with helpers the page does not have.
  await context.addInitScript({
    content: `PushManager.prototype.subscribe = async function () {
      const sub = ${JSON.stringify(subscription)};
      return {
        endpoint: sub.endpoint,
        expirationTime: null,
        toJSON() {
          return { endpoint: sub.endpoint, expirationTime: null, keys: sub.keys };
        },
      };
    };`,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  mkdirSync(TEST_OUTPUT, { recursive: true });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return {
    context,
    page,
    cdp,
    errors,
    screenshot: async (shot) => {
      await page.screenshot({ path: join(TEST_OUTPUT, `${shot}.png`), fullPage: true });
    },
    close: () => context.close(),
  };
}

/**
 * Delivers a push message's plaintext to the phone's service worker, as the browser would after
 * decrypting it. Chromium drops a DevTools push now and then on a loaded machine (the command
 * succeeds, no push event runs), so a push the worker must answer is confirmed: its handler
 * posts `refresh` to the pages it controls once it has updated its notifications, and a push not
 * heard of within 30 s (the handler gives the relay 15) is delivered again, as a push service
 * retries. What the handler does is untouched: a handler that runs and shows nothing still fails
 * the test that expects a notification. Waiting for it also keeps the test's reads of the
 * notifications out of the moment one is being shown, which Chromium can lose them to.
 */
export async function deliverPush(phone: BrowserPhone, origin: string, data: string): Promise<void> {
  // Only a page the worker controls hears it, and only of a push the worker can parse.
  const heard = parseJson(pushMessageSchema, data).ok ? await pushesHeard(phone) : undefined;
  for (let delivery = 1; ; delivery++) {
    await deliverPushOnce(phone, origin, data);
    if (heard === undefined) return;
    const handled = await phone.page
      .waitForFunction((before) => (window as PushCounting).__latchPushesHeard! > before, heard, {
        timeout: 30_000,
      })
      .then(() => true)
      .catch(() => false);
    if (handled) return;
    if (delivery === 3) throw new Error('the service worker never received the push (3 deliveries)');
  }
}

type PushCounting = Window & { __latchPushesHeard?: number };

/** Starts counting, in the page, the pushes the worker says it received: the count so far. */
async function pushesHeard(phone: BrowserPhone): Promise<number | undefined> {
  return phone.page
    .evaluate(() => {
      const page = window as PushCounting;
      if (!navigator.serviceWorker.controller) return undefined;
      if (page.__latchPushesHeard === undefined) {
        page.__latchPushesHeard = 0;
        navigator.serviceWorker.addEventListener('message', (event: MessageEvent) => {
          if ((event.data as { type?: string } | null)?.type === 'refresh') page.__latchPushesHeard! += 1;
        });
      }
      return page.__latchPushesHeard;
    })
    .catch(() => undefined);
}

async function deliverPushOnce(phone: BrowserPhone, origin: string, data: string): Promise<void> {
  type Updated = { registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] };
  let listener: ((updated: Updated) => void) | undefined;
  const registrations = new Promise<string>((resolve) => {
    listener = ({ registrations: list }: Updated) => {
      const found = list.find(
        (registration) => registration.scopeURL.startsWith(origin) && !registration.isDeleted,
      );
      if (found) resolve(found.registrationId);
    };
    phone.cdp.on('ServiceWorker.workerRegistrationUpdated', listener);
  });
  // Enabling the domain reports the registrations, once: enabled already (an earlier push), it
  // would report nothing, so it is switched off first.
  await phone.cdp.send('ServiceWorker.disable');
  await phone.cdp.send('ServiceWorker.enable');
  const registrationId = await registrations;
  phone.cdp.off('ServiceWorker.workerRegistrationUpdated', listener!);
  await phone.cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data });
}

/** The notifications the phone's service worker is showing. */
export function shownNotifications(
  phone: BrowserPhone,
): Promise<{ title: string; body: string; actions: string[]; tag: string }[]> {
  return phone.page.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    return (await registration.getNotifications()).map((notification) => ({
      title: notification.title,
      body: notification.body,
      tag: notification.tag,
      actions: ((notification as unknown as { actions: { action: string }[] }).actions ?? []).map(
        (action) => action.action,
      ),
    }));
  });
}
