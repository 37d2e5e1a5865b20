/// <reference lib="webworker" />
import { cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { pushMessageSchema } from '../../shared/messages/events.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { deny, fetchRequest, openRequest, type OpenedRequest } from './actions.ts';
import { loadIdentity } from './keystore.ts';
import { requestPath } from './paths.ts';

declare let self: ServiceWorkerGlobalScope;

// The offline app shell: every built file, and index.html for every app route (not /v1).
precacheAndRoute(self.__WB_MANIFEST);
cleanupOutdatedCaches();
registerRoute(new NavigationRoute(createHandlerBoundToURL('/index.html'), { denylist: [/^\/v1\//] }));

self.addEventListener('message', (event) => {
  if ((event.data as { type?: string } | null)?.type === 'SKIP_WAITING') void self.skipWaiting();
});

interface NotificationData {
  fleet: string;
  requestId?: string;
  host?: string;
  summary?: boolean;
}

/** The request a push names, opened with this phone's key: from the push itself, else from the relay. */
async function openPushed(
  fleet: string,
  requestId: string,
  box: string | undefined,
): Promise<OpenedRequest | undefined> {
  const identity = await loadIdentity();
  if (!identity) return undefined;
  if (box) {
    const opened = await openRequest(identity, fleet, {
      requestId,
      host: '',
      conversation: 'none',
      risk: 'low',
      createdAt: 0,
      exp: 0,
      state: 'pending',
      box,
    });
    // The box names its host; the relay's copy is needed only when it did not fit in the push.
    if (!('error' in opened)) return { ...opened, view: { ...opened.view, host: opened.details.host } };
  }
  const view = await fetchRequest(identity, fleet, requestId);
  if (!view.ok) return undefined;
  const opened = await openRequest(identity, fleet, view.value);
  return 'error' in opened ? undefined : opened;
}

async function notify(text: string): Promise<void> {
  const message = parseJson(pushMessageSchema, text);
  if (!message.ok) return;
  const push = message.value;
  for (const client of await self.clients.matchAll({ type: 'window' }))
    client.postMessage({ type: 'refresh' });
  if (push.type === 'summary') {
    await self.registration.showNotification('Latch', {
      body: `${push.pending} requests are waiting. Open Latch to see them all.`,
      tag: `summary-${push.fleet}`,
      data: { fleet: push.fleet, summary: true } satisfies NotificationData,
    });
    return;
  }
  const opened = await openPushed(push.fleet, push.requestId, push.box);
  const data: NotificationData = {
    fleet: push.fleet,
    requestId: push.requestId,
    ...(opened ? { host: opened.details.host } : {}),
  };
  await self.registration.showNotification(
    opened ? `${opened.details.hostName}: ${opened.details.tool}` : 'Latch: a request is waiting',
    {
      body: opened ? opened.details.detail || opened.details.title : 'Open Latch to see it.',
      tag: push.requestId,
      requireInteraction: true,
      data,
      // Where the platform shows actions (not iOS). Approve needs Face ID, hence a page.
      actions: [
        { action: 'approve', title: 'Approve' },
        { action: 'deny', title: 'Deny' },
      ],
    } as NotificationOptions,
  );
}

self.addEventListener('push', (event) => {
  event.waitUntil(notify(event.data?.text() ?? ''));
});

async function openApp(path: string): Promise<void> {
  const clients = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const client = clients[0];
  if (client) {
    await client.focus();
    await client.navigate(path);
    return;
  }
  await self.clients.openWindow(path);
}

self.addEventListener('notificationclick', (event) => {
  const data = event.notification.data as NotificationData;
  event.notification.close();
  event.waitUntil(
    (async () => {
      if (data.summary || !data.requestId) return openApp('/');
      if (event.action === 'deny' && data.host) {
        const identity = await loadIdentity();
        if (identity) {
          const result = await deny(identity, data.fleet, data.host, data.requestId);
          await self.registration.showNotification(result.ok ? 'Denied' : 'Not denied', {
            body: result.ok ? 'The agent was told no.' : result.message,
            tag: data.requestId,
          });
          return;
        }
      }
      await openApp(requestPath(data.fleet, data.requestId));
    })(),
  );
});
