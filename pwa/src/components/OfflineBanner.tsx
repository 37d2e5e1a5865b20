import { useConnectivityWatch } from '../useConnectivity.ts';

/** HH:MM, on a 24-hour clock, in the phone's time zone (toTimeString starts "HH:MM:SS GMT…"). */
const clock = (at: number): string => new Date(at).toTimeString().slice(0, 5);

/**
 * Says the app is offline, and how old what it shows is. What needs the relay (approve, deny,
 * panic, votes, devices) is switched off meanwhile; this says why. `id` is what those controls'
 * aria-describedby names.
 */
export function OfflineBanner() {
  const { offline, knownAt } = useConnectivityWatch();
  if (!offline) return null;
  return (
    <div class="banner offline" role="status" id="offline-reason">
      <strong>
        {knownAt === undefined
          ? 'Offline — the relay cannot be reached.'
          : `Offline — showing what was known at ${clock(knownAt)}.`}
      </strong>{' '}
      Approving, denying and PANIC need the network: they come back with it. On a computer,{' '}
      <code>latch panic</code> still freezes that computer at once.
    </div>
  );
}
