import { signDeviceRequest } from '../../shared/device-auth/deviceRequest.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import { refusalInBody, type Refusal } from '../../shared/errors.ts';
import type { Field } from '../../shared/schema/field.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { connectivityMark, relayReached, relayUnreachable } from './connectivity.ts';
import type { DeviceIdentity } from './keystore.ts';
import { learnRelayTime, relayNow } from './relayClock.ts';

/**
 * How long a call may take before the app treats the relay as out of reach: a phone on a dead
 * network can leave a fetch pending for minutes, and the app must not show a spinner that long.
 */
const CALL_TIMEOUT_MS = 15_000;

export type ApiResult<T> = { ok: true; value: T } | ({ ok: false; status: number } & Refusal);

export interface CallOptions {
  /** Signs the request with the device key, at relay time. */
  identity?: DeviceIdentity;
  body?: unknown;
  /** A body that carries its own signed time (an envelope): built at relay time, for each try. */
  signedBody?: (relayNow: number) => Promise<unknown>;
  headers?: Record<string, string>;
}

/**
 * The most an answer of the relay may weigh: a full list (1000 requests, each with a box of up to
 * 8 KB) and then some. MAX_BODY_BYTES (64 KB) bounds what the relay takes, not what it answers: a
 * list of more than a few dozen requests was refused as too large, and its fleet then showed
 * nothing waiting (review rh, a host's flood).
 */
export const MOST_ANSWER_BYTES = 12 << 20;

/**
 * One call to the relay (this page's own origin). Answers are parsed like any untrusted input.
 * A signed call refused for its time is signed again once with the relay's time, which the
 * refusal carries (relayClock.ts); a second refusal is the answer, so a call never loops.
 */
export async function relayCall<T>(
  method: string,
  path: string,
  schema: Field<T>,
  options: CallOptions = {},
): Promise<ApiResult<T>> {
  const signsTime = options.identity !== undefined || options.signedBody !== undefined;
  let answer = await exchange(method, path, options);
  if (signsTime && !answer.ok && answer.code === 'stale_timestamp')
    answer = await exchange(method, path, options);
  if (!answer.ok) return answer;
  const parsed = parseJson(schema, answer.value, MOST_ANSWER_BYTES);
  return parsed.ok
    ? parsed
    : { ok: false, status: answer.status, code: parsed.error.code, message: parsed.error.message };
}

/** Sends the call once; the answer's text, or the refusal. */
async function exchange(
  method: string,
  path: string,
  options: CallOptions,
): Promise<{ ok: true; status: number; value: string } | ({ ok: false; status: number } & Refusal)> {
  const now = relayNow();
  const payload = options.signedBody ? await options.signedBody(now) : options.body;
  const body = payload === undefined ? undefined : utf8(JSON.stringify(payload));
  const headers: Record<string, string> = {
    ...options.headers,
    ...(body ? { 'content-type': 'application/json' } : {}),
  };
  if (options.identity) {
    Object.assign(
      headers,
      await signDeviceRequest(
        { method, path, body: body ?? new Uint8Array(0) },
        { id: options.identity.id, privateKey: options.identity.signing.privateKey },
        now,
      ),
    );
  }
  let response: Response;
  let text: string;
  const mark = connectivityMark();
  try {
    const signal = AbortSignal.timeout(CALL_TIMEOUT_MS);
    response = await fetch(path, { method, headers, signal, ...(body ? { body } : {}) });
    text = await response.text();
  } catch {
    relayUnreachable();
    return { ok: false, status: 0, code: 'offline', message: 'the relay cannot be reached' };
  }
  relayReached(mark);
  learnRelayTime(response.headers);
  if (!response.ok) {
    // No refusal the relay wrote (a proxy's page, a crash): a code whose words are the app's.
    const refused = refusalInBody(text, {
      code: response.status === 429 ? 'too_many_requests' : 'http_error',
      message: '',
    });
    return { ok: false, status: response.status, ...refused };
  }
  return { ok: true, status: response.status, value: text };
}

export const fleetPath = (fleet: string, rest: string) => `/v1/fleets/${encodeURIComponent(fleet)}${rest}`;
