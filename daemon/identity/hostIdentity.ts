import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { exportPublicKey, generateSigningKeyPair, keyId } from '../../shared/keys/p256.ts';

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

export async function loadHostIdentity(path: string): Promise<HostIdentity> {
  if (!existsSync(path)) throw new Error(`no host key at ${path}; run latch init`);
  const stored = JSON.parse(readFileSync(path, 'utf8')) as StoredIdentity;
  const privateKey = await crypto.subtle.importKey(
    'jwk',
    stored.privateJwk,
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['sign'],
  );
  return { id: stored.id, publicKey: stored.publicKey, privateKey };
}
