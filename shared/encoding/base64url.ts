import { LatchError } from '../errors.ts';

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Unpadded base64url (RFC 4648 §5), the only binary encoding on Latch's wire. */
export function toBase64url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Strict decoding: no padding, no whitespace, no other alphabet, and no stray bits in the last
 * character, so that every byte string has exactly one spelling (a token cannot be "new" by
 * being spelled differently).
 */
export function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  if (!BASE64URL.test(text) || text.length % 4 === 1) {
    throw new LatchError('malformed_base64url', 'not unpadded base64url');
  }
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  if (toBase64url(bytes) !== text) {
    throw new LatchError('malformed_base64url', 'non-canonical base64url');
  }
  return bytes;
}
