// The part of http_ece (web-push's encryption) the push vector test calls.
declare module 'http_ece' {
  import type { ECDH } from 'node:crypto';
  export function encrypt(
    buffer: Buffer,
    params: { version: 'aes128gcm'; dh: string; privateKey: ECDH; salt: string; authSecret: string },
  ): Buffer;
  const ece: { encrypt: typeof encrypt };
  export default ece;
}
