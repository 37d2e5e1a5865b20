import { fromBase64url } from '../../../shared/encoding/base64url.ts';
import type { PushSubscriptionJson } from '../../../shared/messages/common.ts';
import { relayConfigSchema } from '../../../shared/messages/relayViews.ts';
import { f } from '../../../shared/schema/index.ts';
import { loadIdentity, loadMemberships } from '../keystore.ts';
import { fleetPath, relayCall } from '../relayApi.ts';

/** Why this phone will get no notifications. */
export type PushOffReason =
  /** No service worker, Push API or Notification API here (iOS outside the home screen). */
  | 'unsupported'
  | 'denied'
  /** Permission never asked: browsers (iOS always) ask only from a tap. */
  | 'not-asked'
  | 'no-relay-key'
  | 'no-subscription'
  /** The phone has a subscription, but a fleet's relay did not take it. */
  | 'not-registered';

export type PushStatus = { on: true } | { on: false; reason: PushOffReason | 'not-paired' };

const updatedSchema = /* @__PURE__ */ f.object({ v: f.version(), updated: f.boolean() });
/** Which subscription each fleet's relay last took from this phone: { fleet: endpoint }. */
const REGISTERED_KEY = 'latch.push.registered';

let inFlight: Promise<PushStatus> | undefined;

/**
 * Makes sure this phone gets notifications: permission, a push subscription, and every fleet's
 * relay told of it. Pairing never waits for this: a push service that never answers (a browser
 * without one) would hold pairing up forever, so callers run it in the background and show why
 * there will be no notifications when it fails or takes too long. One attempt at a time.
 * `ask`: ask for permission, only from a tap (iOS refuses otherwise).
 */
export function ensurePushSubscription(options: { ask?: boolean } = {}): Promise<PushStatus> {
  inFlight ??= attempt(options.ask ?? false).finally(() => (inFlight = undefined));
  return inFlight;
}

/**
 * Forgets that `fleet`'s relay has this phone's subscription: a new pairing with it starts
 * without one (a phone revoked and paired again had its subscription dropped by the relay).
 */
export function forgetPushRegistration(fleet: string): void {
  const registered = readRegistered();
  delete registered[fleet];
  localStorage.setItem(REGISTERED_KEY, JSON.stringify(registered));
}

const off = (reason: PushOffReason): PushStatus => ({ on: false, reason });

async function attempt(ask: boolean): Promise<PushStatus> {
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window))
    return off('unsupported');
  let permission = Notification.permission;
  if (permission === 'default' && ask) permission = await Notification.requestPermission();
  if (permission === 'denied') return off('denied');
  if (permission !== 'granted') return off('not-asked');
  const [identity, memberships] = await Promise.all([loadIdentity(), loadMemberships()]);
  if (!identity || memberships.length === 0) return { on: false, reason: 'not-paired' };

  const subscription = await currentSubscription();
  if (typeof subscription === 'string') return off(subscription);
  const registered = readRegistered();
  for (const { fleet } of memberships) {
    if (registered[fleet] === subscription.endpoint) continue;
    const result = await relayCall('PUT', fleetPath(fleet, '/push'), updatedSchema, {
      identity,
      body: subscription,
    });
    if (!result.ok) return off('not-registered');
    registered[fleet] = subscription.endpoint;
    localStorage.setItem(REGISTERED_KEY, JSON.stringify(registered));
  }
  return { on: true };
}

/** The push subscription this phone has, or a new one; may never settle without a push service. */
async function currentSubscription(): Promise<
  PushSubscriptionJson | 'no-relay-key' | 'no-subscription' | 'not-registered'
> {
  const registration = await navigator.serviceWorker.ready;
  let subscription = await registration.pushManager.getSubscription();
  if (!subscription) {
    const config = await relayCall('GET', '/v1/config', relayConfigSchema);
    // The relay cannot be reached: nothing could be registered there either.
    if (!config.ok) return 'not-registered';
    if (!config.value.vapidPublicKey) return 'no-relay-key';
    try {
      subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: fromBase64url(config.value.vapidPublicKey),
      });
    } catch {
      return 'no-subscription';
    }
  }
  const json = subscription.toJSON();
  return json.endpoint && json.keys?.['p256dh'] && json.keys['auth']
    ? { endpoint: json.endpoint, keys: { p256dh: json.keys['p256dh'], auth: json.keys['auth'] } }
    : 'no-subscription';
}

function readRegistered(): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(REGISTERED_KEY) ?? '{}');
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}
