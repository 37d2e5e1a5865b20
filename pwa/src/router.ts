import { useEffect, useMemo, useState } from 'preact/hooks';

/** The app's routes, as paths the relay serves index.html for. */
export type Route =
  | { name: 'home' }
  | { name: 'pair' }
  | { name: 'scan' }
  | { name: 'devices' }
  | { name: 'request'; fleet: string; requestId: string };

export function parseRoute(pathname: string): Route {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'pair') return { name: 'pair' };
  if (parts[0] === 'scan') return { name: 'scan' };
  if (parts[0] === 'devices') return { name: 'devices' };
  if (parts[0] === 'requests' && parts[1] && parts[2])
    return { name: 'request', fleet: parts[1], requestId: parts[2] };
  return { name: 'home' };
}

export function navigate(path: string): void {
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const onChange = () => setPath(location.pathname);
    // A notification tapped while this page was open, but not yet under the service worker
    // (which navigates the pages it controls itself): the worker asks the page to show it.
    const onMessage = (event: MessageEvent) => {
      const data = event.data as { type?: unknown; path?: unknown } | null;
      if (data?.type === 'open' && typeof data.path === 'string' && /^\/(?!\/)/.test(data.path))
        navigate(data.path);
    };
    addEventListener('popstate', onChange);
    navigator.serviceWorker?.addEventListener('message', onMessage);
    onChange(); // a navigation between the first render and this effect (a frame later)
    return () => {
      removeEventListener('popstate', onChange);
      navigator.serviceWorker?.removeEventListener('message', onMessage);
    };
  }, []);
  return useMemo(() => parseRoute(path), [path]);
}
