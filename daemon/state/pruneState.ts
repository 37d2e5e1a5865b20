import type { LatchConfig } from '../config/config.ts';
import { GrantStore } from '../grants/grantStore.ts';
import type { StateStore } from './stateStore.ts';

const DAY_MS = 86_400_000;

/**
 * Forgets what is finished and older than the retention (docs/daemon.md, "What Latch keeps, and
 * for how long"): settled requests, expired or revoked grants, votes toward ended freezes, phones whose pairing
 * was given up; and settled requests past the newest `max_requests`. Used
 * tokens and TOTP steps are forgot at each use, once they can no longer verify.
 */
export function pruneState(store: StateStore, retention: LatchConfig['retention'], now: number): void {
  const before = now - retention.requestsDays * DAY_MS;
  store.db.transaction(() => {
    store.pruneRequests(before);
    store.capSettledRequests(retention.maxRequests, now);
    store.pruneResumeVotes(before);
    store.pruneAwaitingDevices(before);
    new GrantStore(store.db).pruneEnded(before);
  });
}

/**
 * Prunes now, then every tenth of the retention, at most a day apart: a short retention (a soak
 * run's minutes) stays short. The retention is asked each time, so a changed config applies at
 * the next prune. A prune that fails (a busy or full disk) is logged and tried again next time.
 */
export function schedulePrune(
  store: StateStore,
  retention: () => LatchConfig['retention'],
  log: (line: string) => void,
): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const prune = () => {
    try {
      pruneState(store, retention(), Date.now());
    } catch (error) {
      log(`could not prune the state database, trying again later: ${(error as Error).message}`);
    }
    if (!stopped) timer = setTimeout(prune, Math.min(DAY_MS, (retention().requestsDays * DAY_MS) / 10));
  };
  prune();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
