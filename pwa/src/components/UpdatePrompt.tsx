import { useEffect, useState } from 'preact/hooks';

/**
 * Registers the service worker, and offers a reload when a new version is waiting. The platform's
 * own API, not workbox-window: these few lines are all of it the app used, at a tenth of its size.
 */
export function UpdatePrompt() {
  const [waiting, setWaiting] = useState<ServiceWorker | undefined>();
  useEffect(() => {
    if (!('serviceWorker' in navigator)) return;
    const container = navigator.serviceWorker;
    // Only a page an older version controls reloads: the first install takes over nothing.
    const wasControlled = container.controller !== null;
    container.addEventListener('controllerchange', () => {
      if (wasControlled) location.reload();
    });
    // A new version waits only while an older one controls the page.
    const offerIfWaiting = (worker: ServiceWorker | null) => {
      if (worker?.state === 'installed' && container.controller) setWaiting(worker);
    };
    void container.register('/sw.js', { scope: '/' }).then((registration) => {
      offerIfWaiting(registration.waiting);
      registration.addEventListener('updatefound', () => {
        const installing = registration.installing;
        installing?.addEventListener('statechange', () => offerIfWaiting(installing));
      });
    });
  }, []);
  if (!waiting) return null;
  return (
    <div class="banner" role="status">
      A new version of Latch is ready.{' '}
      <button type="button" onClick={() => waiting.postMessage({ type: 'SKIP_WAITING' })}>
        Reload
      </button>
    </div>
  );
}
