import { verifyDeviceRequest } from '../../shared/device-auth/deviceRequest.ts';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { refusal, unauthenticated, type RelayResult } from '../http/relayError.ts';
import { row, type DeviceRow, type FleetContext } from './context.ts';

/** A device-signed HTTP request as the Worker hands it over. */
export interface SignedRequest {
  method: string;
  path: string;
  body: Uint8Array<ArrayBuffer>;
  headers: Record<string, string>;
}

/** Nonces are remembered this long: the ±60 s skew window with a wide margin. */
export const NONCE_TTL_MS = 10 * 60_000;

/**
 * Records a nonce, refusing one seen before. Expired nonces are swept here, so the table holds
 * only the last ten minutes.
 */
export function consumeNonce(ctx: FleetContext, nonce: string): boolean {
  const now = ctx.now();
  ctx.sql.exec('DELETE FROM nonces WHERE expires_at < ?', now);
  if (row(ctx.sql, 'SELECT 1 FROM nonces WHERE nonce = ?', nonce)) return false;
  ctx.sql.exec('INSERT INTO nonces (nonce, expires_at) VALUES (?, ?)', nonce, now + NONCE_TTL_MS);
  return true;
}

export function activeDevice(ctx: FleetContext, id: string): DeviceRow | undefined {
  return row<DeviceRow>(ctx.sql, 'SELECT * FROM devices WHERE id = ? AND revoked_at IS NULL', id);
}

/**
 * Verifies a request signed by a paired device's key: signature over method, path, body hash,
 * time and nonce; time within ±60 s; nonce never seen. `selfKey` lets a phone that is not yet
 * paired prove it holds the key it is pairing with.
 */
export async function authenticateDevice(
  ctx: FleetContext,
  request: SignedRequest,
  selfKey?: { id: string; deviceKey: string },
): Promise<RelayResult<{ device: string }>> {
  const headers = new Headers(request.headers);
  const verified = await verifyDeviceRequest(
    request,
    headers,
    (device) => {
      if (selfKey && device === selfKey.id) return fromBase64url(selfKey.deviceKey);
      const stored = activeDevice(ctx, device);
      return stored ? fromBase64url(stored.device_key) : undefined;
    },
    ctx.now(),
  );
  // Whatever is wrong with a signed request, the answer is "not authenticated".
  if (!verified.ok) return unauthenticated(verified.error.code, verified.error.message);
  if (!consumeNonce(ctx, verified.value.nonce)) {
    return refusal('replayed_nonce', 'this request was already received');
  }
  return { ok: true, value: { device: verified.value.device } };
}

/** The paired, unrevoked device that signed the request. */
export async function signingDevice(
  ctx: FleetContext,
  request: SignedRequest,
): Promise<RelayResult<DeviceRow>> {
  const auth = await authenticateDevice(ctx, request);
  if (!auth.ok) return auth;
  const device = activeDevice(ctx, auth.value.device);
  return device ? { ok: true, value: device } : refusal('unknown_credential', 'the device was revoked');
}
