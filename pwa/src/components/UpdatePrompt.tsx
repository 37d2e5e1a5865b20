import { useEffect, useState } from 'preact/hooks';
import { Workbox } from 'workbox-window';

/** Registers the service worker, and offers a reload when a new version is waiting. */
export function UpdatePrompt() {
  const [waiting, setWaiting] = useState<Workbox | undefined>();
  useEffect(() => {
    if (!('serviceWorker' in navigator)) return;
    const workbox = new Workbox('/sw.js', { scope: '/' });
    workbox.addEventListener('waiting', () => setWaiting(workbox));
    workbox.addEventListener('controlling', () => location.reload());
    void workbox.register();
  }, []);
  if (!waiting) return null;
  return (
    <div class="banner" role="status">
      A new version of Latch is ready.{' '}
      <button type="button" onClick={() => waiting.messageSkipWaiting()}>
        Reload
      </button>
    </div>
  );
}
