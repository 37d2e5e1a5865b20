/**
 * Every failure the protocol can report. Callers branch on `code`, never on `message`; tests assert
 * the code. A code, once published, keeps its meaning.
 */
export const LATCH_ERROR_CODES = [
  // Untrusted input: shape and size
  'malformed_json',
  'body_too_large',
  'unknown_version',
  'missing_field',
  'unknown_field',
  'invalid_field',
  'field_too_large',
  'invalid_id',
  'malformed_base64url',
  'unclean_text',
  // WebAuthn assertion checks (WebAuthn Level 3, §7.2), in the order they run
  'unknown_credential',
  'malformed_client_data',
  'wrong_type',
  'challenge_mismatch',
  'origin_mismatch',
  'cross_origin',
  'top_origin_present',
  'malformed_authenticator_data',
  'rp_id_mismatch',
  'user_not_present',
  'user_not_verified',
  'bad_signature',
  'counter_not_increased',
  'device_mismatch',
  'expired',
  'already_used',
  'stale_freeze',
  // Keys, envelopes, encryption and pairing
  'invalid_key',
  'wrong_signer',
  'wrong_kind',
  'stale_timestamp',
  'decrypt_failed',
  'context_mismatch',
  'bad_mac',
  'registration_failed',
] as const;

export type LatchErrorCode = (typeof LATCH_ERROR_CODES)[number];

export class LatchError extends Error {
  override readonly name = 'LatchError';
  readonly code: LatchErrorCode;

  constructor(code: LatchErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** The outcome of a check on untrusted input: a value, or the reason it was refused. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: LatchError };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail<T = never>(code: LatchErrorCode, message: string): Result<T> {
  return { ok: false, error: new LatchError(code, message) };
}

/** Runs `body`, turning a thrown LatchError into a failed Result. Anything else is a bug and propagates. */
export async function attempt<T>(body: () => Promise<T>): Promise<Result<T>> {
  try {
    return ok(await body());
  } catch (error) {
    if (error instanceof LatchError) return { ok: false, error };
    throw error;
  }
}
