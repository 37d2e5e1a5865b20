/**
 * The relay's clock, on every answer it gives under /v1/: milliseconds since the epoch. A phone
 * signs its calls with relay time (its own clock plus the offset it learns here), so a phone
 * whose clock is off can still sign calls the relay takes within its ±60 s window. `Date` is no
 * use for this: it has whole seconds only, and a local workerd may leave it out.
 */
export const RELAY_TIME_HEADER = 'latch-relay-time';

/** The relay's time from an answer's headers, or undefined when absent or not a time. */
export function readRelayTime(headers: { get(name: string): string | null }): number | undefined {
  const value = headers.get(RELAY_TIME_HEADER);
  if (value === null || !/^\d{1,16}$/.test(value)) return undefined;
  const time = Number(value);
  return Number.isSafeInteger(time) ? time : undefined;
}
