import { existsSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { exportPublicKey, generateSigningKeyPair, keyId } from '../../shared/keys/p256.ts';
import { readRegularFile } from '../config/readRegularFile.ts';
import { LastingFault } from '../lastingFault.ts';

/** This machine's identity key: it signs pairing confirmations and `latch panic` freezes. */
export interface HostIdentity {
  id: string;
  publicKey: string;
  privateKey: CryptoKey;
}

interface StoredIdentity {
  id: string;
  publicKey: string;
  privateJwk: JsonWebKey;
}

export async function createHostIdentity(path: string): Promise<HostIdentity> {
  const keys = await generateSigningKeyPair(true);
  const publicKey = toBase64url(await exportPublicKey(keys.publicKey));
  const id = await keyId(await exportPublicKey(keys.publicKey));
  const stored: StoredIdentity = {
    id,
    publicKey,
    privateJwk: await crypto.subtle.exportKey('jwk', keys.privateKey),
  };
  writeFileSync(path, `${JSON.stringify(stored)}\n`, { mode: 0o600, flag: 'wx' });
  return { id, publicKey, privateKey: keys.privateKey };
}

/**
 * This host's identity key, as `latch init` wrote it. A file that does not hold one whole (cut
 * short, edited, another host's public half beside this one's private key) is a LastingFault
 * that names the file: nothing signs with a key whose id is not its own.
 */
export async function loadHostIdentity(path: string): Promise<HostIdentity> {
  if (!existsSync(path)) throw new Error(`no host key at ${path}; run latch init`);
  const damaged = () =>
    new LastingFault(
      `${path} is not the host key latch init wrote (damaged or replaced): restore it from a backup; without it this host is set up anew (move ${dirname(path)} aside, latch init, latch pair)`,
    );
  let stored: unknown;
  try {
    const read = readRegularFile(path, { followLinks: false });
    if (!read.ok) throw damaged();
    stored = JSON.parse(read.text);
  } catch {
    throw damaged();
  }
  if (!isStoredIdentity(stored)) throw damaged();
  let privateKey: CryptoKey;
  let publicKey: Uint8Array<ArrayBuffer>;
  try {
    privateKey = await crypto.subtle.importKey(
      'jwk',
      stored.privateJwk,
      { name: 'ECDSA', namedCurve: 'P-256' },
      false,
      ['sign'],
    );
    // The public half, from the private key's own coordinates.
    const { x, y } = stored.privateJwk;
    const publicHalf = await crypto.subtle.importKey(
      'jwk',
      { kty: 'EC', crv: 'P-256', x, y },
      { name: 'ECDSA', namedCurve: 'P-256' },
      true,
      ['verify'],
    );
    publicKey = await exportPublicKey(publicHalf);
  } catch {
    throw damaged();
  }
  if (stored.publicKey !== toBase64url(publicKey) || stored.id !== (await keyId(publicKey))) throw damaged();
  return { id: stored.id, publicKey: stored.publicKey, privateKey };
}

function isStoredIdentity(value: unknown): value is StoredIdentity {
  if (typeof value !== 'object' || value === null) return false;
  const { id, publicKey, privateJwk } = value as Record<string, unknown>;
  return (
    typeof id === 'string' &&
    typeof publicKey === 'string' &&
    typeof privateJwk === 'object' &&
    privateJwk !== null &&
    !Array.isArray(privateJwk)
  );
}
