import { sanitizeText } from './text/sanitizeText.ts';

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

/** Codes the relay adds to the protocol's own (docs/protocol.md). */
export const RELAY_ONLY_ERROR_CODES = [
  'not_found',
  'unauthorized',
  'forbidden',
  'already_decided',
  'withdrawn',
  'replayed_nonce',
  'offer_closed',
  'host_token_required',
  'not_frozen',
  'unsupported_media_type',
  'too_many_offers',
  'push_service_refused',
  'too_many_devices',
  'too_many_requests',
  'method_not_allowed',
  'request_id_taken',
  'no_paired_phone',
] as const;

export type RelayErrorCode = LatchErrorCode | (typeof RELAY_ONLY_ERROR_CODES)[number];

const RELAY_ERROR_CODES: ReadonlySet<string> = new Set([...LATCH_ERROR_CODES, ...RELAY_ONLY_ERROR_CODES]);

/** Whether a relay's code is one Latch publishes: words of Latch's, not ones a relay made up. */
export const isRelayErrorCode = (code: string): code is RelayErrorCode => RELAY_ERROR_CODES.has(code);

/**
 * Why something was refused, in the one shape every tier uses: the code callers branch on (never
 * the message), and a message for people. An error answer's body is `{ "error": Refusal }`.
 */
export interface Refusal<Code extends string = string> {
  code: Code;
  message: string;
}

/** A code is a word callers compare, as every code of Latch's is; anything else is no code. */
const REFUSAL_CODE = /^[a-z][a-z0-9_]{0,63}$/;
/** A message travels on to terminals, deny reasons and the audit log: one line, this long at most. */
const REFUSAL_MESSAGE_BYTES = 512;

/**
 * The refusal in an error answer's body, or `otherwise` when the body holds none (a proxy's
 * HTML page, a cut answer): a client never takes a message for a code. The body comes from a
 * server nobody vouches for, so its message is cleaned (no terminal escapes) and capped.
 */
export function refusalInBody(text: string, otherwise: Refusal): Refusal {
  try {
    const { error } = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof error?.code === 'string' && REFUSAL_CODE.test(error.code) && typeof error.message === 'string')
      return {
        code: error.code,
        message: sanitizeText(error.message, { maxBytes: REFUSAL_MESSAGE_BYTES, multiline: false }).text,
      };
  } catch {
    // not JSON: `otherwise`
  }
  return otherwise;
}

export class LatchError extends Error implements Refusal<LatchErrorCode> {
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
