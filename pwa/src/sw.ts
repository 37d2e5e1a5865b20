/// <reference lib="webworker" />
import { cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { pushMessageSchema, type PushMessage } from '../../shared/messages/pushMessages.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { deny, fetchRequest, openPushedBox, openRequest, type OpenedRequest } from './actions.ts';
import { loadIdentity, loadLockScreenPrivacy, saveTappedPush } from './keystore.ts';
import { closeNotifications, notificationData, type NotificationData } from './notifications.ts';
import { requestPath } from './paths.ts';
import { relayNow } from './relayClock.ts';
import { notificationText } from './requestCard.ts';
import type { ApiResult } from './relayApi.ts';

declare let self: ServiceWorkerGlobalScope;

// The offline app shell: every built file, and index.html for every app route (not /v1).
precacheAndRoute(self.__WB_MANIFEST);
cleanupOutdatedCaches();
registerRoute(new NavigationRoute(createHandlerBoundToURL('/index.html'), { denylist: [/^\/v1\//] }));

self.addEventListener('message', (event) => {
  if ((event.data as { type?: string } | null)?.type === 'SKIP_WAITING') void self.skipWaiting();
});

/** Past this, a request push shows the generic notification (a browser gives a push handler ~30 s). */
const OPEN_PUSHED_WITHIN_MS = 15_000;

/** The request a push names, opened with this phone's key: from the push itself, else from the relay. */
async function openPushed(
  fleet: string,
  requestId: string,
  box: string | undefined,
): Promise<OpenedRequest | undefined> {
  const identity = await loadIdentity();
  if (!identity) return undefined;
  // The relay's copy is needed only when the box did not fit in the push, or did not open.
  const pushed = box && (await openPushedBox(identity, fleet, requestId, box));
  if (pushed) return pushed;
  const view = await fetchRequest(identity, fleet, requestId);
  if (!view.ok) return undefined;
  const opened = await openRequest(identity, fleet, view.value);
  return 'error' in opened ? undefined : opened;
}

async function onPush(text: string): Promise<void> {
  const message = parseJson(pushMessageSchema, text);
  if (!message.ok) return;
  try {
    await updateNotifications(message.value);
  } finally {
    // Only once the notification is on display: a page's list then reads the notifications to
    // close those that no longer wait, and Chromium drops for good from what getNotifications()
    // lists a notification it had stored but not yet displayed at the time of the read.
    for (const client of await self.clients.matchAll({ type: 'window' }))
      client.postMessage({ type: 'refresh' });
  }
}

/** What a push changes on screen: a request's notification shown, or closed, or the summary. */
async function updateNotifications(push: PushMessage): Promise<void> {
  if (push.type === 'closed') {
    // Decided on another phone, expired or withdrawn: its notification goes (the push says which
    // request, not how it ended; the app shows that).
    await closeNotifications(self.registration, push.fleet, (id) => id !== push.requestId, {
      tag: push.requestId,
    });
    return;
  }
  if (push.type === 'summary') {
    await self.registration.showNotification('Latch', {
      body: `${push.pending} requests are waiting. Open Latch to see them all.`,
      tag: `summary-${push.fleet}`,
      data: { fleet: push.fleet, summary: true } satisfies NotificationData,
    });
    return;
  }
  // A request push always shows a notification: one that cannot be opened (storage or the
  // relay failing) says only that a request waits, and a privacy setting that cannot be read
  // hides the details.
  const opened = await Promise.race([
    openPushed(push.fleet, push.requestId, push.box).catch(() => undefined),
    // Storage or the relay that never answers must not leave the request without a notification.
    new Promise<undefined>((resolve) => setTimeout(resolve, OPEN_PUSHED_WITHIN_MS)),
  ]);
  const data: NotificationData = {
    fleet: push.fleet,
    requestId: push.requestId,
    ...(opened ? { host: opened.details.host } : {}),
    ...(opened && push.box ? { box: push.box, pushedAt: Date.now() } : {}),
  };
  const shown = opened
    ? notificationText(opened.details, await loadLockScreenPrivacy().catch(() => true))
    : { title: 'Latch: a request is waiting', body: 'Open Latch to see it.' };
  // A push can arrive after its request's deadline (a phone offline, a short timeout): it is
  // still shown, as every push must be, but quietly and with nothing left to answer.
  const expired = opened !== undefined && relayNow() >= opened.details.exp;
  await self.registration.showNotification(expired ? `Expired: ${shown.title}` : shown.title, {
    body: shown.body,
    tag: push.requestId,
    requireInteraction: !expired,
    silent: expired,
    data,
    // Where the platform shows actions (not iOS, where a tap opens the request). Deny is done
    // here; Approve opens the request, since only a page can ask for Face ID. A request asked
    // again after a deny offers Deny alone: approving it takes opening it and reading why.
    actions: expired
      ? []
      : opened?.details.askedAgainAfterDeny
        ? [{ action: 'deny', title: 'Deny' }]
        : [
            { action: 'approve', title: 'Approve' },
            { action: 'deny', title: 'Deny' },
          ],
  } as NotificationOptions);
}

self.addEventListener('push', (event) => {
  event.waitUntil(onPush(event.data?.text() ?? ''));
});

/**
 * Shows `path` in a window of the app: the one in front if there is one, else a new one. A page
 * this worker controls is navigated; any other (opened before the worker took over) is asked to
 * route itself. Focusing is allowed only just after a tap, so it is tried, never relied on.
 */
async function openApp(path: string): Promise<void> {
  const url = new URL(path, self.location.origin).href;
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const client =
    windows.find((window) => window.focused) ??
    windows.find((window) => window.visibilityState === 'visible') ??
    windows[0];
  if (!client) {
    await self.clients.openWindow(url);
    return;
  }
  await client.focus().catch(() => undefined);
  const navigated = await client.navigate(url).catch(() => null);
  if (!navigated) client.postMessage({ type: 'open', path });
}

/** Replaces the request's notification with the outcome of a deny sent from it. */
async function showOutcome(data: NotificationData, result: ApiResult<unknown>): Promise<void> {
  const requestId = data.requestId!;
  if (result.ok) {
    await self.registration.showNotification('Denied', {
      body: 'The agent was told no.',
      tag: requestId,
      silent: true,
      data: { fleet: data.fleet, requestId, outcome: 'denied' } satisfies NotificationData,
    });
    return;
  }
  // Its host withdrew it: nobody waits for an answer, and nothing ran. Nothing is left to refuse.
  if (result.code === 'withdrawn') {
    await self.registration.showNotification('No longer waiting', {
      body: 'The agent stopped waiting; nothing was approved.',
      tag: requestId,
      silent: true,
      data: {
        fleet: data.fleet,
        requestId,
        outcome: 'refused',
        code: result.code,
      } satisfies NotificationData,
    });
    return;
  }
  // Kept on screen: the person believes they refused, and must learn that it did not go through.
  await self.registration.showNotification('Not denied', {
    // The relay's own words are never shown as Latch's: the app says what became of it.
    body:
      result.code === 'offline'
        ? 'No connection to the relay. Open Latch to try again.'
        : 'Open Latch to see why.',
    tag: requestId,
    requireInteraction: true,
    data: { fleet: data.fleet, requestId, outcome: 'refused', code: result.code } satisfies NotificationData,
  });
}

/**
 * Deny, from the notification: signed with this phone's device key, like the app's Deny button,
 * and with no Face ID, since refusing is the safe direction (design.md). The relay answers
 * already_decided or expired when the request no longer waits; the notification then says so.
 */
async function denyFromNotification(data: NotificationData & { requestId: string }): Promise<void> {
  const identity = await loadIdentity();
  if (!identity) return openApp('/');
  let host = data.host;
  if (!host) {
    // The details did not open in the push: the relay's word for the host is enough to refuse
    // (the relay checks the deny names the request's own host, and the daemon its own request).
    const view = await fetchRequest(identity, data.fleet, data.requestId);
    if (!view.ok) return showOutcome(data, view);
    host = view.value.host;
  }
  await showOutcome(data, await deny(identity, data.fleet, host, data.requestId));
}

async function onNotificationClick(notification: Notification, action: string): Promise<void> {
  const data = notificationData(notification.data);
  if (!data?.requestId || data.summary) return openApp('/');
  if (action === 'deny' && !data.outcome) return denyFromNotification({ ...data, requestId: data.requestId });
  // Approve, a plain tap (all iOS offers), or a tap on an outcome: the request's screen, where
  // the person reads what they approve and approves with Face ID. Nothing is approved here.
  // The box from the push goes with it: the screen then asks the relay nothing before the answer.
  if (data.box && data.pushedAt !== undefined && !data.outcome)
    await saveTappedPush({
      fleet: data.fleet,
      requestId: data.requestId,
      box: data.box,
      pushedAt: data.pushedAt,
    }).catch(() => {});
  return openApp(requestPath(data.fleet, data.requestId));
}

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(onNotificationClick(event.notification, event.action));
});
