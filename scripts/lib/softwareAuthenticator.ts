import { isoCBOR } from '@simplewebauthn/server/helpers';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { concatBytes, randomBytes, sha256, utf8 } from '../../shared/encoding/bytes.ts';
import { generateSigningKeyPair } from '../../shared/keys/p256.ts';
import type { Assertion } from '../../shared/messages/common.ts';
import type { Registration } from '../../shared/messages/pairing.ts';

/** Where a ceremony runs, and what the test wants the authenticator to claim. */
export interface Ceremony {
  rpId: string;
  origin: string;
  challenge: Uint8Array;
  userPresent?: boolean;
  userVerified?: boolean;
  /** Overrides clientData.type ("webauthn.get" for assertions). */
  type?: string;
  /** 'omitted' leaves the member out, as older Safari does. */
  crossOrigin?: boolean | 'omitted';
  topOrigin?: string;
  /** Overrides the signature counter the authenticator reports. */
  counter?: number;
  /** Registers this public key (a COSE_Key) in place of the passkey's own: a key a test builds. */
  publicKey?: Uint8Array;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;
const NONE_AAGUID = new Uint8Array(16);

/**
 * A P-256 passkey in software that produces real WebAuthn registration and assertion responses
 * (CTAP2 authenticator data, COSE keys, DER signatures), with flags and counter under the test's
 * control, so that daemon, relay and benchmarks need no browser.
 */
export class SoftwareAuthenticator {
  readonly credentialId: string;
  readonly #keys: CryptoKeyPair;
  #counter: number;

  private constructor(keys: CryptoKeyPair, credentialId: string, counter: number) {
    this.#keys = keys;
    this.credentialId = credentialId;
    this.#counter = counter;
  }

  /** `counter: 'zero'` behaves like synced passkeys, which always report 0. */
  static async create(options: { counter?: 'increment' | 'zero' } = {}): Promise<SoftwareAuthenticator> {
    const keys = await generateSigningKeyPair(false);
    return new SoftwareAuthenticator(keys, toBase64url(randomBytes(16)), options.counter === 'zero' ? -1 : 0);
  }

  async register(ceremony: Ceremony): Promise<Registration> {
    const credentialId = fromBase64url(this.credentialId);
    const attestedCredentialData = concatBytes(
      NONE_AAGUID,
      Uint8Array.of(credentialId.length >> 8, credentialId.length & 0xff),
      credentialId,
      ceremony.publicKey ?? (await this.#coseKey()),
    );
    const authenticatorData = concatBytes(
      await this.#authenticatorData(ceremony, FLAG_AT, 0),
      attestedCredentialData,
    );
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authenticatorData],
      ]) as Parameters<typeof isoCBOR.encode>[0],
    );
    return {
      credentialId: this.credentialId,
      clientDataJSON: toBase64url(this.#clientData(ceremony, 'webauthn.create')),
      attestationObject: toBase64url(attestationObject),
      transports: ['internal'],
    };
  }

  async assert(ceremony: Ceremony): Promise<Assertion> {
    const counter = ceremony.counter ?? (this.#counter < 0 ? 0 : ++this.#counter);
    const authenticatorData = await this.#authenticatorData(ceremony, 0, counter);
    const clientDataJSON = this.#clientData(ceremony, 'webauthn.get');
    const signed = concatBytes(authenticatorData, await sha256(clientDataJSON));
    const p1363 = new Uint8Array(
      await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, this.#keys.privateKey, signed),
    );
    return {
      credentialId: this.credentialId,
      clientDataJSON: toBase64url(clientDataJSON),
      authenticatorData: toBase64url(authenticatorData),
      signature: toBase64url(derSignature(p1363)),
    };
  }

  #clientData(ceremony: Ceremony, defaultType: string): Uint8Array<ArrayBuffer> {
    return utf8(
      JSON.stringify({
        type: ceremony.type ?? defaultType,
        challenge: toBase64url(ceremony.challenge),
        origin: ceremony.origin,
        ...(ceremony.crossOrigin === 'omitted' ? {} : { crossOrigin: ceremony.crossOrigin ?? false }),
        ...(ceremony.topOrigin === undefined ? {} : { topOrigin: ceremony.topOrigin }),
      }),
    );
  }

  async #authenticatorData(
    ceremony: Ceremony,
    extraFlags: number,
    counter: number,
  ): Promise<Uint8Array<ArrayBuffer>> {
    const flags =
      ((ceremony.userPresent ?? true) ? FLAG_UP : 0) |
      ((ceremony.userVerified ?? true) ? FLAG_UV : 0) |
      extraFlags;
    const counterBytes = new Uint8Array(4);
    new DataView(counterBytes.buffer).setUint32(0, counter);
    return concatBytes(await sha256(utf8(ceremony.rpId)), Uint8Array.of(flags), counterBytes);
  }

  /** The public key as a COSE_Key (RFC 9053): EC2, ES256, P-256, x, y. */
  async #coseKey(): Promise<Uint8Array> {
    const jwk = (await crypto.subtle.exportKey('jwk', this.#keys.publicKey)) as JsonWebKey;
    return isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, fromBase64url(jwk.x!)],
        [-3, fromBase64url(jwk.y!)],
      ]),
    );
  }
}

/** Web Crypto signs ECDSA as r ‖ s; WebAuthn carries ASN.1 DER (SEQUENCE of two INTEGERs). */
export function derSignature(p1363: Uint8Array): Uint8Array<ArrayBuffer> {
  const integer = (bytes: Uint8Array) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const trimmed = bytes.subarray(start);
    const body = trimmed[0]! & 0x80 ? concatBytes(Uint8Array.of(0), trimmed) : trimmed;
    return concatBytes(Uint8Array.of(0x02, body.length), body);
  };
  const sequence = concatBytes(integer(p1363.subarray(0, 32)), integer(p1363.subarray(32)));
  return concatBytes(Uint8Array.of(0x30, sequence.length), sequence);
}
