import { useEffect, useState } from 'preact/hooks';
import { relayConfigSchema } from '../../shared/messages/relayViews.ts';
import { connectivity, onConnectivityChange, relayUnreachable, type Connectivity } from './connectivity.ts';
import { relayCall } from './relayApi.ts';

/** While offline, how often the app asks the relay whether it is back. */
const PROBE_MS = 5000;

/** Any answer from the relay ends "offline" (relayCall reports it); none keeps it. */
const probe = () => void relayCall('GET', '/v1/config', relayConfigSchema);

/** The app's link to the relay, for a component: re-rendered when it changes. */
export function useConnectivity(): Connectivity {
  const [state, setState] = useState(connectivity);
  useEffect(() => {
    const update = () => setState(connectivity());
    const stop = onConnectivityChange(update);
    // Effects run a frame after the render: a change in between (the network lost just as a
    // request came on screen) would otherwise leave its buttons on until the next change.
    update();
    return stop;
  }, []);
  return state;
}

/**
 * One action at a time, for a screen's buttons: `off` while offline or while an action `run`
 * started is under way (a Face ID prompt, a request), and `run` starts none then, so a second tap
 * starts no second prompt. Cleared however the action ends, a cancelled Face ID included.
 */
export function useAction(): [off: boolean, run: (action: () => Promise<unknown>) => void] {
  const { offline } = useConnectivity();
  const [busy, setBusy] = useState(false);
  // A tap re-renders its button disabled before the next tap is handled (Preact renders in a
  // microtask), as the request screen's answers rely on.
  const off = offline || busy;
  return [
    off,
    (action) => {
      if (off) return;
      setBusy(true);
      void action().finally(() => setBusy(false));
    },
  ];
}

/**
 * Keeps the link's state current, for the one component that is always on screen: the phone's
 * own word that it lost its network counts at once, and while offline the relay is probed, so
 * that a screen which makes no calls of its own (a request under review) gets its buttons back as
 * soon as the relay answers.
 */
export function useConnectivityWatch(): Connectivity {
  const state = useConnectivity();
  useEffect(() => {
    addEventListener('offline', relayUnreachable);
    addEventListener('online', probe);
    if (!navigator.onLine) relayUnreachable(); // lost before the listeners were on
    return () => {
      removeEventListener('offline', relayUnreachable);
      removeEventListener('online', probe);
    };
  }, []);
  useEffect(() => {
    if (!state.offline) return;
    const timer = setInterval(probe, PROBE_MS);
    return () => clearInterval(timer);
  }, [state.offline]);
  return state;
}
