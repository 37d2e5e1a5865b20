import { generateKeyPairSync } from 'node:crypto';

/** A relay's VAPID key pair (RFC 8292), base64url as web-push reads them. */
export interface VapidKeys {
  /** The uncompressed P-256 point (0x04 ‖ x ‖ y), 65 bytes: what browsers subscribe with. */
  publicKey: string;
  /** The private scalar, 32 bytes. */
  privateKey: string;
}

/** A new VAPID key pair, made with Node's own crypto (the CLI does not carry web-push). */
export function generateVapidKeys(): VapidKeys {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  if (!jwk.x || !jwk.y || !jwk.d) throw new Error('Node exported an EC key without its coordinates');
  const point = Buffer.concat([
    Buffer.of(4),
    Buffer.from(jwk.x, 'base64url'),
    Buffer.from(jwk.y, 'base64url'),
  ]);
  return { publicKey: point.toString('base64url'), privateKey: jwk.d };
}
