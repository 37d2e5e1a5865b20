import { readRelayTime } from '../../shared/device-auth/relayTime.ts';

/**
 * How far the relay's clock is ahead of this phone's. The relay takes signed calls only within
 * ±60 s of its own clock (docs/security.md#clocks), and a phone's clock may be minutes off, so
 * the app signs every timestamp with relay time. Learning it from the relay gives the relay
 * nothing: it checks against its own clock either way.
 */
let offsetMs = 0;

/** The relay's time now, as best this phone knows it. */
export function relayNow(): number {
  return Date.now() + offsetMs;
}

/** Learns the offset from an answer that carries the relay's time; other answers change nothing. */
export function learnRelayTime(headers: Headers): void {
  const relayTime = readRelayTime(headers);
  if (relayTime !== undefined) offsetMs = relayTime - Date.now();
}
