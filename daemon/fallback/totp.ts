import { createHmac, randomBytes } from 'node:crypto';

const STEP_SECONDS = 30;
const DIGITS = 6;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, the alphabet authenticator apps read. */
export function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** A new TOTP secret: 160 bits, as RFC 4226 recommends. */
export function newTotpSecret(): Uint8Array {
  return new Uint8Array(randomBytes(20));
}

/**
 * The longest URI whose QR code fits an 80×24 terminal with a line above and one below: 78 bytes,
 * a version-4 code at level L (daemon/pairing/terminalQr.ts).
 */
const URI_MAX_BYTES = 78;

/**
 * The otpauth:// URI an authenticator app scans (Google's Key Uri Format). It names no algorithm,
 * digits or period: SHA-1, 6 and 30 s are every app's defaults, and ours. The label's `Latch:`
 * names the issuer, so no `issuer` parameter either; the account (the host's name) is cut, at a
 * whole character, to what fits the 78 bytes: 17 bytes once encoded.
 */
export function totpUri(secret: Uint8Array, account: string): string {
  const start = 'otpauth://totp/Latch:';
  const query = `?secret=${base32(secret)}`;
  let label = '';
  for (const char of account) {
    const longer = label + encodeURIComponent(char);
    if (start.length + longer.length + query.length > URI_MAX_BYTES) break;
    label = longer;
  }
  return `${start}${label}${query}`;
}

/** RFC 6238 with HMAC-SHA-1 (what every authenticator app speaks), for one time step. */
export function totpCode(secret: Uint8Array, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const number = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** DIGITS;
  return number.toString().padStart(DIGITS, '0');
}

/** The time step a code matches, within ±1 step of `now`, or undefined. */
export function matchTotp(secret: Uint8Array, code: string, now: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const current = Math.floor(now / 1000 / STEP_SECONDS);
  return [current - 1, current, current + 1].find((step) => totpCode(secret, step) === code);
}
