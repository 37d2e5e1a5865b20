/**
 * Whether the app reaches its relay, as its last call found, and, while it does not, since when
 * the lists it shows were known. No framework here: the service worker shares relayApi, which
 * reports to it.
 */
export interface Connectivity {
  offline: boolean;
  /** While offline: when the oldest answer the app is showing came from the relay. */
  knownAt: number | undefined;
}

let current: Connectivity = { offline: false, knownAt: undefined };
const listeners = new Set<() => void>();

function set(next: Connectivity): void {
  if (next.offline === current.offline && next.knownAt === current.knownAt) return;
  current = next;
  for (const listener of listeners) listener();
}

export const connectivity = (): Connectivity => current;

export function onConnectivityChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The relay answered (whatever it said): the app is online, and what it shows is current. */
export const relayReached = () => set({ offline: false, knownAt: undefined });

/** A call found no way to the relay. */
export const relayUnreachable = () => set({ offline: true, knownAt: current.knownAt });

/** The app shows an answer the relay gave at `at`, kept from when it was online. */
export const showingLastKnown = (at: number) =>
  set({ offline: true, knownAt: Math.min(current.knownAt ?? at, at) });
