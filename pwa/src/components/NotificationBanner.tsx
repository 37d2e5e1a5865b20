import { useEffect, useRef, useState } from 'preact/hooks';
import {
  ensurePushSubscription,
  type PushOffReason,
  type PushStatus,
} from '../push/ensurePushSubscription.ts';

/**
 * How long a push service may take before the phone is told it has none. A browser without one
 * never answers a subscribe (seen: Chromium without its push service waits forever).
 */
const PATIENCE_MS = 10_000;

type Reason = PushOffReason | 'no-answer';

const REASONS: Record<Reason, string> = {
  unsupported:
    'This browser cannot receive push messages here. On an iPhone, add Latch to the Home Screen and open it from there.',
  denied: 'Notifications are blocked for Latch. Allow them in this browser’s site settings.',
  'not-asked': 'Notifications are not turned on.',
  'no-relay-key': 'The relay has no push key (VAPID), so it cannot send notifications.',
  'no-subscription': 'The push service did not give this phone a subscription.',
  'no-answer': 'The push service did not answer.',
  'not-registered': 'The relay has not taken this phone’s push subscription.',
};

/** What the button does for each reason, where a tap can help. */
const ACTIONS: Partial<Record<Reason, string>> = {
  'not-asked': 'Turn on notifications',
  'no-subscription': 'Try again',
  'no-answer': 'Try again',
  'not-registered': 'Try again',
};

/**
 * "No notifications on this phone", and why, whenever this phone will get none. It starts the
 * subscription itself (in the background), and checks again when the app comes back into view,
 * say from the settings where notifications were allowed. `confirm`: also say when they are on
 * (right after pairing, where the person expects to hear about it).
 */
export function NotificationBanner({ confirm = false }: { confirm?: boolean }) {
  const [reason, setReason] = useState<Reason | 'on'>();
  const attempt = useRef(0);

  const check = (ask: boolean) => {
    const id = ++attempt.current;
    const timer = setTimeout(() => {
      if (attempt.current === id) setReason('no-answer');
    }, PATIENCE_MS);
    void ensurePushSubscription({ ask }).then((status: PushStatus) => {
      clearTimeout(timer);
      if (attempt.current !== id) return;
      setReason(status.on ? 'on' : status.reason === 'not-paired' ? undefined : status.reason);
    });
  };

  useEffect(() => {
    check(false);
    const onVisible = () => {
      if (document.visibilityState === 'visible') check(false);
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      attempt.current = -1; // unmounted: late answers are dropped
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, []);

  if (!reason) return null;
  if (reason === 'on')
    return confirm ? (
      <p class="muted" role="status">
        Notifications are on.
      </p>
    ) : null;
  const action = ACTIONS[reason];
  return (
    <section class="status warning" role="status" aria-label="notifications">
      <strong>No notifications on this phone.</strong> {REASONS[reason]} Requests still show here, but nothing
      will alert you.
      {action && (
        <button type="button" onClick={() => check(true)}>
          {action}
        </button>
      )}
    </section>
  );
}
