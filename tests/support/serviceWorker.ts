import type { Worker } from 'playwright-core';
import type { BrowserPhone } from './browserPhone.ts';

/** The app's service worker in this phone's browser (waiting for it to start if need be). */
export async function serviceWorkerOf(phone: BrowserPhone): Promise<Worker> {
  return phone.context.serviceWorkers()[0] ?? (await phone.context.waitForEvent('serviceworker'));
}

/** A notification as the page reads it back: enough to assert what the phone shows and carries. */
export interface ShownNotification {
  title: string;
  body: string;
  tag: string;
  data: Record<string, unknown> | null;
}

/** The notifications the phone shows, all or those tagged `tag` (a request's id). */
export function notificationsOf(phone: BrowserPhone, tag?: string): Promise<ShownNotification[]> {
  return phone.page.evaluate(async (only) => {
    const registration = await navigator.serviceWorker.ready;
    return (await registration.getNotifications(only === null ? {} : { tag: only })).map((shown) => ({
      title: shown.title,
      body: shown.body,
      tag: shown.tag,
      data: shown.data as Record<string, unknown> | null,
    }));
  }, tag ?? null);
}

/**
 * Taps the notification tagged `tag`, on `action` ('' for the notification itself, all iOS
 * offers), as the browser would: a real NotificationEvent for the shown notification, dispatched
 * in the service worker to the listener the app registered. Chromium has no DevTools command for
 * it. The platform lets only a trusted event extend its lifetime (ExtendableEvent.waitUntil throws
 * on a dispatched one), so the test takes the promises the listener hands to waitUntil and waits
 * for them, as the browser would. Window focus and new windows are also reserved for trusted
 * taps: a handler must not rely on them (the app navigates an open window instead).
 */
export async function tapNotification(phone: BrowserPhone, tag: string, action: string): Promise<void> {
  const worker = await serviceWorkerOf(phone);
  await worker.evaluate(
    async ({ tag: wanted, action: chosen }) => {
      interface Scope {
        registration: ServiceWorkerRegistration;
        dispatchEvent(event: Event): boolean;
      }
      type NotificationEventCtor = new (
        type: string,
        init: { notification: Notification; action: string },
      ) => Event;
      const scope = self as unknown as Scope;
      const [notification] = await scope.registration.getNotifications({ tag: wanted });
      if (!notification) throw new Error(`no notification tagged ${wanted}`);
      const NotificationEvent = (globalThis as unknown as { NotificationEvent: NotificationEventCtor })
        .NotificationEvent;
      const event = new NotificationEvent('notificationclick', { notification, action: chosen });
      const extended: Promise<unknown>[] = [];
      Object.defineProperty(event, 'waitUntil', {
        value: (promise: Promise<unknown>) => void extended.push(promise),
      });
      scope.dispatchEvent(event);
      if (extended.length === 0) throw new Error('the notificationclick listener extended nothing');
      await Promise.all(extended);
    },
    { tag, action },
  );
}
