import { canonicalBytes } from '../canonical/canonicalize.ts';
import { fromBase64url, toBase64url } from '../encoding/base64url.ts';
import { randomBytes, sha256 } from '../encoding/bytes.ts';
import { attempt, LatchError, type Result } from '../errors.ts';
import { importVerifyingKey, keyId } from '../keys/p256.ts';
import { validateId } from '../text/validateId.ts';
import { PROTOCOL_VERSION } from '../version.ts';

/** The headers a phone adds to each request it signs with its device key. */
export const DEVICE_AUTH_HEADERS = {
  device: 'latch-device',
  timestamp: 'latch-timestamp',
  nonce: 'latch-nonce',
  signature: 'latch-signature',
} as const;

/** A signed request is good for this long either side of the relay's clock. */
export const DEVICE_AUTH_MAX_SKEW_MS = 60_000;

export interface DeviceRequest {
  method: string;
  /** Path and query, e.g. "/v1/fleets/abc/requests?state=pending". */
  path: string;
  body: Uint8Array<ArrayBuffer>;
}

async function signingBytes(request: DeviceRequest, device: string, ts: number, nonce: string) {
  const bodyHash = toBase64url(await sha256(request.body));
  return canonicalBytes({
    v: PROTOCOL_VERSION,
    method: request.method.toUpperCase(),
    path: request.path,
    bodyHash,
    ts,
    nonce,
    device,
  });
}

/** Signs method, path, body hash, time and a fresh nonce; returns the headers to send. */
export async function signDeviceRequest(
  request: DeviceRequest,
  device: { id: string; privateKey: CryptoKey },
  now: number = Date.now(),
): Promise<Record<string, string>> {
  const nonce = toBase64url(randomBytes(16));
  const signature = await crypto.subtle.sign(
    { name: 'ECDSA', hash: 'SHA-256' },
    device.privateKey,
    await signingBytes(request, device.id, now, nonce),
  );
  return {
    [DEVICE_AUTH_HEADERS.device]: device.id,
    [DEVICE_AUTH_HEADERS.timestamp]: String(now),
    [DEVICE_AUTH_HEADERS.nonce]: nonce,
    [DEVICE_AUTH_HEADERS.signature]: toBase64url(new Uint8Array(signature)),
  };
}

export interface VerifiedDeviceRequest {
  device: string;
  /** Single-use for the skew window: the caller records it and refuses it a second time. */
  nonce: string;
  ts: number;
}

/**
 * Checks a signed request's headers against the device's stored key. `lookupKey` returns the raw
 * public key of a paired device, or undefined. Nonce reuse is the caller's to refuse, since only
 * the caller has storage.
 */
export function verifyDeviceRequest(
  request: DeviceRequest,
  headers: { get(name: string): string | null },
  lookupKey: (
    device: string,
  ) => Uint8Array<ArrayBuffer> | undefined | Promise<Uint8Array<ArrayBuffer> | undefined>,
  now: number = Date.now(),
): Promise<Result<VerifiedDeviceRequest>> {
  return attempt(async () => {
    const device = headers.get(DEVICE_AUTH_HEADERS.device);
    const timestamp = headers.get(DEVICE_AUTH_HEADERS.timestamp);
    const nonce = headers.get(DEVICE_AUTH_HEADERS.nonce);
    const signature = headers.get(DEVICE_AUTH_HEADERS.signature);
    if (!device || !timestamp || !nonce || !signature) {
      throw new LatchError('missing_field', 'the request is not signed by a device');
    }
    if (!validateId(device).ok) throw new LatchError('invalid_id', 'the device header is not an id');
    const ts = /^\d{1,16}$/.test(timestamp) ? Number(timestamp) : NaN;
    if (!Number.isSafeInteger(ts) || Math.abs(now - ts) > DEVICE_AUTH_MAX_SKEW_MS) {
      throw new LatchError('stale_timestamp', 'the request time is outside ±60 s of the relay clock');
    }
    if (fromBase64url(nonce).length !== 16) throw new LatchError('invalid_field', 'the nonce has 16 bytes');
    const publicKey = await lookupKey(device);
    if (!publicKey || (await keyId(publicKey)) !== device) {
      throw new LatchError('unknown_credential', 'no paired device has this id');
    }
    const valid = await crypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      await importVerifyingKey(publicKey),
      fromBase64url(signature),
      await signingBytes(request, device, ts, nonce),
    );
    if (!valid) throw new LatchError('bad_signature', 'the request signature does not verify');
    return { device, nonce, ts };
  });
}
