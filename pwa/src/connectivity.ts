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
/** How many times the link was found lost: an answer to a call made before the last loss is stale. */
let losses = 0;
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

/** Taken before a call, and handed back with its answer to `relayReached`. */
export const connectivityMark = (): number => losses;

/**
 * The relay answered a call made at `mark` (whatever it said): the app is online, and what it
 * shows is current. Unless the link was lost after that call set out, or the phone says it has no
 * network: an answer already on its way when the phone went offline (or let through while its
 * network was going) does not bring it back; the probe does, once the network is back.
 */
export function relayReached(mark: number): void {
  if (mark !== losses || globalThis.navigator?.onLine === false) return;
  set({ offline: false, knownAt: undefined });
}

/** A call found no way to the relay, or the phone says it has no network. */
export function relayUnreachable(): void {
  losses += 1;
  set({ offline: true, knownAt: current.knownAt });
}

/** The app shows an answer the relay gave at `at`, kept from when it was online. */
export const showingLastKnown = (at: number) =>
  set({ offline: true, knownAt: Math.min(current.knownAt ?? at, at) });
