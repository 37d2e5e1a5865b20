import type { LatchErrorCode, Refusal, RelayErrorCode } from '../../shared/errors.ts';
import type { PROTOCOL_VERSION } from '../../shared/version.ts';

export type RefusalStatus = 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 415 | 429;

/**
 * The one place a refusal's HTTP status comes from. Shape faults are 400, a caller not proven
 * 401, a failed proof 403, a state that forbids the step 409, a passed deadline 410.
 */
export const STATUS_BY_CODE: Readonly<Record<RelayErrorCode, RefusalStatus>> = {
  malformed_json: 400,
  body_too_large: 413,
  unknown_version: 400,
  missing_field: 400,
  unknown_field: 400,
  invalid_field: 400,
  field_too_large: 400,
  invalid_id: 400,
  malformed_base64url: 400,
  unclean_text: 400,
  unknown_credential: 401,
  malformed_client_data: 403,
  wrong_type: 403,
  challenge_mismatch: 403,
  origin_mismatch: 403,
  cross_origin: 403,
  top_origin_present: 403,
  malformed_authenticator_data: 403,
  rp_id_mismatch: 403,
  user_not_present: 403,
  user_not_verified: 403,
  bad_signature: 403,
  counter_not_increased: 403,
  device_mismatch: 403,
  expired: 410,
  already_used: 409,
  stale_freeze: 409,
  invalid_key: 400,
  wrong_signer: 401,
  wrong_kind: 403,
  stale_timestamp: 401,
  decrypt_failed: 403,
  context_mismatch: 400,
  bad_mac: 403,
  registration_failed: 403,
  not_found: 404,
  unauthorized: 401,
  forbidden: 403,
  already_decided: 409,
  withdrawn: 409,
  replayed_nonce: 401,
  offer_closed: 409,
  host_token_required: 401,
  not_frozen: 409,
  unsupported_media_type: 415,
  push_service_refused: 400,
  too_many_devices: 409,
  too_many_requests: 429,
  too_many_offers: 429,
  method_not_allowed: 405,
  request_id_taken: 409,
  no_paired_phone: 409,
};

/**
 * A refusal as it crosses from the Durable Object to the Worker (RPC results must be plain
 * data) and on to the client as `{ "error": { "code", "message" } }`.
 */
export interface RelayRefusal extends Refusal<RelayErrorCode> {
  ok: false;
  status: RefusalStatus;
}
export type RelayResult<T> = { ok: true; value: T } | RelayRefusal;

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/** A reply body before the protocol version is put on it (Fleet.ts does, for every reply). */
export type Unversioned<T extends { v: typeof PROTOCOL_VERSION }> = Omit<T, 'v'>;

export function refusal(code: RelayErrorCode, message: string): RelayRefusal {
  return { ok: false, status: STATUS_BY_CODE[code], code, message };
}

/**
 * A request whose device signature or host token fails is refused 401 whatever the check that
 * failed (a missing header is "not signed", not a malformed body): the table's one exception.
 */
export function unauthenticated(code: RelayErrorCode, message: string): RelayRefusal {
  return { ok: false, status: 401, code, message };
}

/** A refusal from a LatchError. */
export function refuseWith(error: { code: LatchErrorCode; message: string }): RelayRefusal {
  return refusal(error.code, error.message);
}

/** The refusal as the client receives it. */
export function refusalResponse(refused: RelayRefusal): Response {
  return Response.json(
    { error: { code: refused.code, message: refused.message } },
    { status: refused.status },
  );
}

/** A refusal thrown inside a route; the app's onError turns it into the JSON error body. */
export class RefusalError extends Error {
  readonly refusal: RelayRefusal;
  constructor(refused: RelayRefusal) {
    super(refused.message);
    this.refusal = refused;
  }
}
