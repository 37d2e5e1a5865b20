import { createHash } from 'node:crypto';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { readRegularFile } from '../config/readRegularFile.ts';
import { writeOwnerOnlyFile } from '../config/writeOwnerOnlyFile.ts';
import type { StateStore } from '../state/stateStore.ts';

/** The SHA-256 of the secret a phone approved, in state.db: totp.json alone proves nothing. */
const APPROVED_SECRET_KEY = 'totp_secret_sha256';
/** Wrong codes since the last right one, and until when codes are refused. */
const WRONG_CODES_KEY = 'totp_wrong_codes';

/**
 * Wrong codes before the fallback stops taking codes, and for how long the first time; each
 * further run of wrong codes doubles it. A code is one guess in 333,333 (three time steps count),
 * so an agent typing codes as fast as requests fail would otherwise find one within days.
 */
const WRONG_CODES_BEFORE_PAUSE = 5;
const FIRST_PAUSE_MS = 15 * 60_000;
const LONGEST_PAUSE_DOUBLINGS = 16;

const fingerprint = (secret: Uint8Array) => createHash('sha256').update(secret).digest('hex');

/** Keeps the secret a phone approved (latch pair --totp): the file, and its fingerprint here. */
export function storeApprovedTotpSecret(store: StateStore, path: string, secret: string): void {
  writeOwnerOnlyFile(path, `${JSON.stringify({ secret })}\n`);
  store.setMeta(APPROVED_SECRET_KEY, fingerprint(fromBase64url(secret)));
  store.deleteMeta(WRONG_CODES_KEY);
}

/**
 * The TOTP secret in `path` if it is the one a phone approved; else undefined (a file written
 * outside any gate, replaced, unreadable or not a regular file).
 */
export function approvedTotpSecret(store: StateStore, path: string): Uint8Array | undefined {
  const approved = store.meta(APPROVED_SECRET_KEY);
  const read = readRegularFile(path, { followLinks: false });
  if (approved === undefined || !read.ok) return undefined;
  try {
    const { secret } = JSON.parse(read.text) as { secret?: unknown };
    const bytes = typeof secret === 'string' ? fromBase64url(secret) : undefined;
    return bytes && fingerprint(bytes) === approved ? bytes : undefined;
  } catch {
    return undefined;
  }
}

interface WrongCodes {
  count: number;
  pausedUntil: number;
}

function wrongCodes(store: StateStore): WrongCodes {
  const value = store.meta(WRONG_CODES_KEY);
  return value === undefined ? { count: 0, pausedUntil: 0 } : (JSON.parse(value) as WrongCodes);
}

/** Until when codes are refused, if they are now. */
export function totpPausedUntil(store: StateStore, now: number): number | undefined {
  const { pausedUntil } = wrongCodes(store);
  return pausedUntil > now ? pausedUntil : undefined;
}

/** Counts a wrong code; every WRONG_CODES_BEFORE_PAUSE of them pause the fallback, twice as long each time. */
export function noteWrongTotpCode(store: StateStore, now: number): void {
  const previous = wrongCodes(store);
  const count = previous.count + 1;
  const pauses = count / WRONG_CODES_BEFORE_PAUSE;
  const pausedUntil = Number.isInteger(pauses)
    ? now + FIRST_PAUSE_MS * 2 ** Math.min(pauses - 1, LONGEST_PAUSE_DOUBLINGS)
    : previous.pausedUntil;
  store.setMeta(WRONG_CODES_KEY, JSON.stringify({ count, pausedUntil }));
}

export function clearWrongTotpCodes(store: StateStore): void {
  store.deleteMeta(WRONG_CODES_KEY);
}
