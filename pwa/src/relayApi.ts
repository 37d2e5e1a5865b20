import { signDeviceRequest } from '../../shared/device-auth/deviceRequest.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import { refusalInBody, type Refusal } from '../../shared/errors.ts';
import type { Field } from '../../shared/schema/field.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { relayReached, relayUnreachable } from './connectivity.ts';
import type { DeviceIdentity } from './keystore.ts';

/**
 * How long a call may take before the app treats the relay as out of reach: a phone on a dead
 * network can leave a fetch pending for minutes, and the app must not show a spinner that long.
 */
const CALL_TIMEOUT_MS = 15_000;

export type ApiResult<T> = { ok: true; value: T } | ({ ok: false; status: number } & Refusal);

/**
 * One call to the relay (this page's own origin). Answers are parsed like any untrusted input;
 * with `identity`, the request is signed with the device key.
 */
export async function relayCall<T>(
  method: string,
  path: string,
  schema: Field<T>,
  options: { identity?: DeviceIdentity; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResult<T>> {
  const body = options.body === undefined ? undefined : utf8(JSON.stringify(options.body));
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
      ),
    );
  }
  let response: Response;
  let text: string;
  try {
    const signal = AbortSignal.timeout(CALL_TIMEOUT_MS);
    response = await fetch(path, { method, headers, signal, ...(body ? { body } : {}) });
    text = await response.text();
  } catch {
    relayUnreachable();
    return { ok: false, status: 0, code: 'offline', message: 'the relay cannot be reached' };
  }
  relayReached();
  if (!response.ok) {
    const refused = refusalInBody(text, {
      code: 'http_error',
      message: `the relay answered ${response.status}`,
    });
    return { ok: false, status: response.status, ...refused };
  }
  const parsed = parseJson(schema, text);
  return parsed.ok
    ? parsed
    : { ok: false, status: response.status, code: parsed.error.code, message: parsed.error.message };
}

export const fleetPath = (fleet: string, rest: string) => `/v1/fleets/${encodeURIComponent(fleet)}${rest}`;
