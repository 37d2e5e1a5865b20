import webpush from 'web-push';
import type { PushSubscriptionJson } from '../../shared/messages/common.ts';

export interface VapidKeys {
  subject: string;
  publicKey: string;
  privateKey: string;
}

export type PushOutcome = 'sent' | 'gone' | 'failed';

/**
 * Sends one RFC 8291 (aes128gcm) push with a VAPID JWT (RFC 8292). web-push builds the request;
 * fetch sends it, because web-push's own sender uses https.request, which in workerd never
 * settles on failure (toolchain.md). A 404 or 410 means the subscription is gone for good.
 */
export async function sendWebPush(
  subscription: PushSubscriptionJson,
  payload: string,
  vapid: VapidKeys,
): Promise<PushOutcome> {
  const request = webpush.generateRequestDetails(subscription, payload, {
    vapidDetails: vapid,
    contentEncoding: 'aes128gcm',
    TTL: 300,
    urgency: 'high',
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
