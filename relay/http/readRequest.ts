import type { HonoRequest } from 'hono';
import { DEVICE_AUTH_HEADERS } from '../../shared/device-auth/deviceRequest.ts';
import type { Field } from '../../shared/schema/index.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { validateId } from '../../shared/text/validateId.ts';
import type { SignedRequest } from '../fleet/deviceAuth.ts';
import { bearerToken } from '../fleet/hostAuth.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import { readBody } from './readBody.ts';
import { refusal, RefusalError, refuseWith } from './relayError.ts';

/** A path parameter that must be an id. */
export function idParam(request: HonoRequest, name: string): string {
  const value = request.param(name) ?? '';
  if (!validateId(value).ok) throw new RefusalError(refusal('invalid_id', `the ${name} is not an id`));
  return value;
}

/** The raw body, within the size limit. Bodies are JSON only, which also makes browsers preflight cross-site posts. */
async function jsonBody(request: HonoRequest): Promise<Uint8Array<ArrayBuffer>> {
  // JSON itself, with parameters or none: not a type of its own that starts alike (`json-patch+json`).
  if (!/^application\/json\s*(;|$)/i.test(request.header('content-type') ?? '')) {
    throw new RefusalError(refusal('unsupported_media_type', 'send application/json'));
  }
  const bytes = await readBody(request.raw);
  if (bytes === 'too_large') throw new RefusalError(refusal('body_too_large', 'the body is over 64 KiB'));
  if (bytes === 'cut')
    throw new RefusalError(refusal('malformed_json', 'the body ended before it was whole'));
  return bytes;
}

/** The body parsed by its schema, and its bytes (a device signs those). */
export async function message<T>(
  request: HonoRequest,
  schema: Field<T>,
): Promise<{ value: T; bytes: Uint8Array<ArrayBuffer> }> {
  const bytes = await jsonBody(request);
  const parsed = parseJson(schema, bytes);
  if (!parsed.ok) throw new RefusalError(refuseWith(parsed.error));
  return { value: parsed.value, bytes };
}

export function signedRequest(
  request: HonoRequest,
  bytes: Uint8Array<ArrayBuffer> = new Uint8Array(0),
): SignedRequest {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  for (const name of Object.values(DEVICE_AUTH_HEADERS)) {
    const value = request.header(name);
    if (value !== undefined) headers[name] = value;
  }
  return { method: request.method, path: url.pathname + url.search, body: bytes, headers };
}

export function bearer(request: HonoRequest): string | undefined {
  return bearerToken(request.header('authorization'));
}

/** The PWA's origin is this relay's: passkeys are bound to it, so assertions are checked against it. */
export function relyingParty(request: HonoRequest): RelyingParty {
  const { origin, hostname } = new URL(request.url);
  return { origins: [origin], rpId: hostname };
}
