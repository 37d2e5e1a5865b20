import type { LatchErrorCode } from '../../shared/errors.ts';

/** Codes the relay adds to the protocol's own. */
export type RelayErrorCode =
  | LatchErrorCode
  | 'not_found'
  | 'unauthorized'
  | 'forbidden'
  | 'already_decided'
  | 'withdrawn'
  | 'replayed_nonce'
  | 'offer_closed'
  | 'host_token_required'
  | 'not_frozen'
  | 'unsupported_media_type'
  | 'too_many_offers';

/**
 * A refusal as it crosses from the Durable Object to the Worker (RPC results must be plain
 * data) and on to the client as `{ "error": { "code", "message" } }`.
 */
export type Refusal = {
  ok: false;
  status: 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 429;
  code: RelayErrorCode;
  message: string;
};
export type RelayResult<T> = { ok: true; value: T } | Refusal;

export function refusal(status: Refusal['status'], code: RelayErrorCode, message: string): Refusal {
  return { ok: false, status, code, message };
}

const STATUS_BY_CODE: Partial<Record<LatchErrorCode, Refusal['status']>> = {
  body_too_large: 413,
  unknown_credential: 401,
  stale_timestamp: 401,
  wrong_signer: 401,
  already_used: 409,
  stale_freeze: 409,
  expired: 410,
};

/** The status for a protocol error: shape faults are 400, failed proofs 403, unless listed. */
export function statusForCode(code: LatchErrorCode): Refusal['status'] {
  const listed = STATUS_BY_CODE[code];
  if (listed) return listed;
  const shapeFaults: readonly LatchErrorCode[] = [
    'malformed_json',
    'unknown_version',
    'missing_field',
    'unknown_field',
    'invalid_field',
    'field_too_large',
    'invalid_id',
    'malformed_base64url',
    'unclean_text',
    'invalid_key',
    'context_mismatch',
  ];
  return shapeFaults.includes(code) ? 400 : 403;
}

/** A refusal from a LatchError, with its status. */
export function refuseWith(error: { code: LatchErrorCode; message: string }): Refusal {
  return refusal(statusForCode(error.code), error.code, error.message);
}
