import type { Locator } from 'playwright-core';
import { expect } from 'vitest';
import type { BrowserPhone } from './browserPhone.ts';

/**
 * The phone loses its network: each of `buttons` turns off (what it does needs the relay), and
 * turns on again once the network, and the relay, are back.
 */
export async function offWhileOffline(browser: BrowserPhone, buttons: Locator[]): Promise<void> {
  await browser.context.setOffline(true);
  try {
    for (const button of buttons) await expect.poll(() => button.isDisabled()).toBe(true);
  } finally {
    await browser.context.setOffline(false);
  }
  for (const button of buttons) await expect.poll(() => button.isEnabled(), { timeout: 10_000 }).toBe(true);
}

/**
 * Counts the Face ID prompts the page starts from now on (calls to navigator.credentials.get,
 * answered or not): `faceIdPrompts` says how many so far.
 */
export async function countFaceIdPrompts(browser: BrowserPhone): Promise<() => Promise<number>> {
  await browser.page.evaluate(() => {
    const counted = window as unknown as { faceIdPrompts: number };
    counted.faceIdPrompts = 0;
    const get = navigator.credentials.get.bind(navigator.credentials);
    navigator.credentials.get = (options) => {
      counted.faceIdPrompts++;
      return get(options);
    };
  });
  return () => browser.page.evaluate(() => (window as unknown as { faceIdPrompts: number }).faceIdPrompts);
}
