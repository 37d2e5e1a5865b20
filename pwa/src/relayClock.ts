import { readRelayTime } from '../../shared/device-auth/relayTime.ts';

/**
 * How far the relay's clock is ahead of this phone's. The relay takes signed calls only within
 * ±60 s of its own clock (docs/security.md#clocks), and a phone's clock may be minutes off, so
 * the app signs every timestamp with relay time. The relay checks against its own clock either
 * way; the offset is capped so that a hostile relay cannot have the phone sign envelopes dated
 * far away, to replay them later: a phone further off than the cap is told to set its clock.
 */
let offsetMs = 0;
const MAX_OFFSET_MS = 10 * 60_000;

/** The relay's time now, as best this phone knows it. */
export function relayNow(): number {
  return Date.now() + offsetMs;
}

/** Learns the offset from an answer that carries the relay's time; other answers change nothing. */
export function learnRelayTime(headers: Headers): void {
  const relayTime = readRelayTime(headers);
  if (relayTime === undefined) return;
  const offset = relayTime - Date.now();
  offsetMs = Math.abs(offset) <= MAX_OFFSET_MS ? offset : 0;
}

/** How long until `exp`, by relay time, as `4:58 left`: the list and the request say it alike. */
export function timeLeft(exp: number): string {
  const seconds = Math.max(0, Math.round((exp - relayNow()) / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')} left`;
}
