import { launchPhone, type BrowserPhone } from './browserPhone.ts';
import type { LatchMachine } from './latchMachine.ts';
import type { PushServiceClient } from './pushServiceClient.ts';
import { pairingLinkOn, startLatch, type LatchRun } from './latchRun.ts';

export interface PairedBrowserPhone {
  browser: BrowserPhone;
  pushId: string;
}

/**
 * `latch pair` (with no terminal: the code is compared, not typed), and a browser phone that opens its link and pairs with Face ID.
 * With `phone`, that phone (already paired with another host) scans this host's code: it keeps
 * its keys, passkey and push subscription, as a real phone joining a further host does.
 * `prepare` readies a new phone before it opens the link. Pairing is done once the phone says
 * its notifications are on: the relay has its push subscription (sent after pairing).
 */
export async function pairBrowserPhone(
  machine: LatchMachine,
  origin: string,
  pushService: PushServiceClient,
  name: string,
  options: {
    approve?: () => Promise<void>;
    phone?: PairedBrowserPhone;
    prepare?: (browser: BrowserPhone) => Promise<void>;
    /** The first Face ID is cancelled: the phone says so, and Try again pairs with the same code. */
    faceIdCancelledFirst?: boolean;
  } = {},
): Promise<PairedBrowserPhone> {
  const { browser, pushId: id } = options.phone ?? (await launchPairingPhone(origin, pushService, name));
  let pair: LatchRun | undefined;
  try {
    if (!options.phone) await options.prepare?.(browser);
    pair = startLatch(machine, ['pair']);
    const link = await pair.waitFor(pairingLinkOn, 'a pairing link');

    await browser.page.goto(link);
    await browser.page.getByLabel('Name this phone').fill(name);
    if (options.faceIdCancelledFirst) await cancelFirstFaceId(browser);
    await browser.page.getByRole('button', { name: 'Pair with Face ID' }).click();
    const code = browser.page.getByLabel('short code');
    await code.waitFor({ timeout: 20_000 });
    const shown = (await code.textContent())!.trim();
    // A host that already trusts a phone adds another only once that phone approves.
    await options.approve?.();
    await pair.exited;
    if (!pair.stdout().includes(`Your phone shows this code: ${shown}`))
      throw new Error(`the phone and the terminal show different codes:\n${pair.stdout()}`);
    await browser.page.getByText(/^Paired with .+\.$/).waitFor();
    await browser.page.getByText('Notifications are on.').waitFor({ timeout: 30_000 });
    // The secret left the address bar once read, and the ended pairing left it too: a reload
    // opens the app.
    if (browser.page.url() !== `${origin}/`)
      throw new Error(`the pairing secret stayed in the address bar: ${browser.page.url()}`);
  } catch (error) {
    // A failed pairing leaves nothing running: not latch pair, nor a phone launched for it.
    pair?.kill();
    if (!options.phone) await browser.close();
    throw error;
  }
  return { browser, pushId: id };
}

/** Pairing with a Face ID the platform rejects: then the form again, the name kept. */
async function cancelFirstFaceId({ page }: BrowserPhone): Promise<void> {
  await page.evaluate(() => {
    const real = navigator.credentials.create.bind(navigator.credentials);
    navigator.credentials.create = () => {
      navigator.credentials.create = real;
      return Promise.reject(new DOMException('The operation was cancelled.', 'NotAllowedError'));
    };
  });
  const name = await page.getByLabel('Name this phone').inputValue();
  await page.getByRole('button', { name: 'Pair with Face ID' }).click();
  await page.getByRole('alert').getByText('Face ID was cancelled.', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Try again' }).click();
  if ((await page.getByLabel('Name this phone').inputValue()) !== name)
    throw new Error('Try again after a cancelled Face ID lost the name typed');
}

async function launchPairingPhone(
  origin: string,
  pushService: PushServiceClient,
  name: string,
): Promise<PairedBrowserPhone> {
  const { id, subscription } = await pushService.subscribe();
  return { browser: await launchPhone(origin, subscription, name), pushId: id };
}

/** Opens, from the home screen, the first pending request whose title matches. */
export async function openPending(phone: BrowserPhone, origin: string, title: RegExp): Promise<void> {
  await phone.page.goto(origin);
  const item = phone.page.getByRole('button', { name: title });
  await item.first().waitFor();
  await item.first().click();
}

/** Opens a pending request and approves it with Face ID, after the cooling-off its risk asks. */
export async function approvePending(phone: BrowserPhone, origin: string, title: RegExp): Promise<void> {
  await openPending(phone, origin, title);
  await phone.page.getByRole('button', { name: 'Approve with Face ID' }).click({ timeout: 40_000 });
  await phone.page.getByRole('status').getByText('Approval sent').waitFor();
}

/** Holds the panic button long enough to fire it: on the home page at `origin`, else where the page is. */
export async function holdPanic(phone: BrowserPhone, origin?: string): Promise<void> {
  if (origin !== undefined) await phone.page.goto(origin);
  await phone.page.getByRole('button', { name: /Panic/ }).hover();
  await phone.page.mouse.down();
  await new Promise((resolve) => setTimeout(resolve, 900));
  await phone.page.mouse.up();
}
