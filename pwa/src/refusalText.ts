import type { Refusal } from '../../shared/errors.ts';

/** The refusals a person meets, in plain words: the relay's own messages are written for programs. */
const PLAIN: Record<string, string> = {
  offline: 'The relay cannot be reached: check the connection, then try again.',
  unknown_credential: 'This phone is not paired with this fleet, or no longer is.',
  not_found: 'This phone has no such request: check the link.',
  invalid_id: 'This link is broken: it names no request.',
  // The relay takes signed calls within ±60 s of its clock, and the app signs with the relay's time,
  // learnt from its answers; still refused, the relay gave no time to learn (docs/security.md#clocks).
  stale_timestamp: 'This phone’s clock is more than a minute off: set it to the network time.',
  already_decided: 'It was answered, or had ended, before this answer came.',
  expired: 'It expired before this answer came.',
  // No refusal the relay wrote (relayApi.ts): it may have failed after taking the call.
  http_error: 'The relay failed: check whether it went through, then try again.',
  too_many_requests: 'Too many requests: wait a minute, then try again.',
};

/**
 * What to tell a person about a refusal: plain words for the codes above, else the relay's
 * message, quoted as the relay's: it is never trusted, and must not read as Latch's own words
 * (a hostile one would write "open latch-verify.example": docs/security.md).
 */
export const refusalText = ({ code, message }: Refusal): string =>
  PLAIN[code] ?? `The relay said: “${message}”`;

/** Said wherever Face ID guards an answer and the person cancelled it. */
export const FACE_ID_CANCELLED = 'Face ID was cancelled. Nothing was sent.';
