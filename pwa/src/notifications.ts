/**
 * What a Latch notification carries in its `data`: enough to act on a tap, never the command.
 * A notification's tag is its request's id, so a newer one for the same request replaces it.
 */
export interface NotificationData {
  fleet: string;
  requestId?: string;
  /** The host, from the sealed details this phone opened: what a deny names. */
  host?: string;
  summary?: boolean;
  /** The sealed box its push carried, and when: handed to the request's screen on a tap. */
  box?: string;
  pushedAt?: number;
  /** Set on the notification that reports a deny sent from a notification. */
  outcome?: 'denied' | 'refused';
  /** Why the relay refused that deny (its error code). */
  code?: string;
}

export function notificationData(value: unknown): NotificationData | undefined {
  const data = value as Partial<NotificationData> | null | undefined;
  if (typeof data?.fleet !== 'string') return undefined;
  if (data.requestId !== undefined && typeof data.requestId !== 'string') return undefined;
  if (data.host !== undefined && typeof data.host !== 'string') return undefined;
  if (data.box !== undefined && (typeof data.box !== 'string' || typeof data.pushedAt !== 'number'))
    return undefined;
  return data as NotificationData;
}

/**
 * Closes the notifications of requests that no longer wait: those of `fleet` for which `waits`
 * says no (only the one tagged `tag`, if given). A notification reporting an outcome of this
 * phone's own stays: the person reads it. So does one shown from `shownBefore` on: a list asked
 * for before its request existed cannot say it no longer waits.
 */
export async function closeNotifications(
  registration: ServiceWorkerRegistration,
  fleet: string,
  waits: (requestId: string) => boolean,
  only: { tag?: string; shownBefore?: number } = {},
): Promise<void> {
  const { tag, shownBefore } = only;
  for (const notification of await registration.getNotifications(tag === undefined ? {} : { tag })) {
    const data = notificationData(notification.data);
    if (data?.fleet !== fleet || !data.requestId || data.outcome) continue;
    // Safari has no timestamp: there, a list closes what it does not hold, as before.
    const shownAt = (notification as Notification & { timestamp?: number }).timestamp;
    if (shownBefore !== undefined && shownAt !== undefined && shownAt >= shownBefore) continue;
    if (!waits(data.requestId)) notification.close();
  }
}
