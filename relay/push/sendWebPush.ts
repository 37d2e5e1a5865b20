import webpush from 'web-push';
import type { PushSubscriptionJson } from '../../shared/messages/common.ts';

export interface VapidKeys {
  subject: string;
  publicKey: string;
  privateKey: string;
}

export type PushOutcome = 'sent' | 'gone' | 'failed';

/** A VAPID JWT is signed for 12 h (RFC 8292 allows 24) and reused for at most one of them. */
const VAPID_LIFETIME_S = 12 * 3600;
const VAPID_REUSE_MS = 3600_000;
const vapidHeaders = new Map<string, { authorization: string; renewAt: number }>();

/**
 * The VAPID Authorization header for one push service. Signing it was most of the cost of
 * building a push (web-push re-encodes the key and signs on every call), so each push service's
 * header is signed once and reused while it is fresh.
 */
export function vapidAuthorization(endpoint: string, vapid: VapidKeys, now: number): string {
  const audience = new URL(endpoint).origin;
  const key = `${audience} ${vapid.publicKey} ${vapid.subject}`;
  const cached = vapidHeaders.get(key);
  if (cached && cached.renewAt > now) return cached.authorization;
  const { Authorization: authorization } = webpush.getVapidHeaders(
    audience,
    vapid.subject,
    vapid.publicKey,
    vapid.privateKey,
    'aes128gcm',
    Math.floor(now / 1000) + VAPID_LIFETIME_S,
  );
  vapidHeaders.set(key, { authorization, renewAt: now + VAPID_REUSE_MS });
  return authorization;
}

/**
 * Sends one RFC 8291 (aes128gcm) push with a VAPID JWT (RFC 8292). web-push encrypts it; fetch
 * sends it, because web-push's own sender uses https.request, which in workerd never settles on
 * failure (toolchain.md). A 404 or 410 means the subscription is gone for good.
 */
export async function sendWebPush(
  subscription: PushSubscriptionJson,
  payload: string,
  vapid: VapidKeys,
): Promise<PushOutcome> {
  const request = webpush.generateRequestDetails(subscription, payload, {
    contentEncoding: 'aes128gcm',
    TTL: 300,
    urgency: 'high',
    headers: { Authorization: vapidAuthorization(subscription.endpoint, vapid, Date.now()) },
  });
  try {
    const response = await fetch(request.endpoint, {
      method: request.method,
      headers: request.headers as Record<string, string>,
      body: request.body,
    });
    await response.body?.cancel();
    if (response.status === 404 || response.status === 410) return 'gone';
    return response.ok ? 'sent' : 'failed';
  } catch {
    return 'failed';
  }
}
