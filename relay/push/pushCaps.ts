/** The caps of design.md: per conversation a minute, per host a minute, per host an hour. */
export interface PushCaps {
  perConversationPerMinute: number;
  perHostPerMinute: number;
  perHostPerHour: number;
}
export const PUSH_CAPS: PushCaps = { perConversationPerMinute: 3, perHostPerMinute: 10, perHostPerHour: 30 };

/**
 * The caps in force: design.md's, unless the operator sets PUSH_CAPS = "3,10,30" (per
 * conversation a minute, per host a minute, per host an hour), e.g. for a load test.
 */
export function pushCapsFrom(setting: string | undefined): PushCaps {
  const numbers = setting?.split(',').map(Number);
  if (!numbers || numbers.length !== 3 || !numbers.every((n) => Number.isInteger(n) && n > 0))
    return PUSH_CAPS;
  const [perConversationPerMinute, perHostPerMinute, perHostPerHour] = numbers as [number, number, number];
  return { perConversationPerMinute, perHostPerMinute, perHostPerHour };
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3600_000;

/**
 * What the fleet's push log says about one host at the moment a new request arrives. A count may
 * stop at its cap (notify.ts counts no further), which decides the same.
 */
export interface PushHistory {
  /** When this host's last summary push went out, if any. */
  lastSummaryAt: number | undefined;
  /** Requests that asked for a push in the past hour, before this one. */
  requestsLastHour: number;
  /** Pushes sent for this host in the past minute. */
  hostPushesLastMinute: number;
  /** Pushes sent for this request's conversation in the past minute. */
  conversationPushesLastMinute: number;
}

export type PushDecision = 'push' | 'summary' | 'silent';

/**
 * Whether a new request is pushed. An agent cannot flood a lock screen: after a summary the
 * host is silent for an hour; the request that would be the 31st of the hour becomes the one
 * summary; the minute caps hold back the rest. Every request is listed in the app regardless.
 */
export function decidePush(history: PushHistory, now: number, caps: PushCaps = PUSH_CAPS): PushDecision {
  if (history.lastSummaryAt !== undefined && now < history.lastSummaryAt + HOUR_MS) return 'silent';
  if (history.requestsLastHour >= caps.perHostPerHour) return 'summary';
  if (history.hostPushesLastMinute >= caps.perHostPerMinute) return 'silent';
  if (history.conversationPushesLastMinute >= caps.perConversationPerMinute) return 'silent';
  return 'push';
}
