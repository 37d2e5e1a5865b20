import { fromBase64url, toBase64url } from '../encoding/base64url.ts';
import { concatBytes, constantTimeEqual, fromUtf8, sha256, utf8 } from '../encoding/bytes.ts';
import { LatchError } from '../errors.ts';
import type { Assertion } from '../messages/common.ts';
import { verifyCoseSignature } from './coseSignature.ts';
import type { PairedCredential } from './pairedCredential.ts';

/** Who an assertion must be for: the relay origins the PWA is served from, and its RP id. */
export interface RelyingParty {
  /** e.g. "https://latch.example.com" */
  origins: readonly string[];
  rpId: string;
}

export interface AssertionExpectation extends RelyingParty {
  /** The challenge the daemon derived from its own record, never one the assertion offers. */
  challenge: Uint8Array;
}

export interface VerifiedAssertion {
  /** The new signature counter, to be stored in place of the old one. */
  counter: number;
}

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;

interface ClientData {
  type: unknown;
  challenge: unknown;
  origin: unknown;
  crossOrigin?: unknown;
  topOrigin?: unknown;
}

function decodeClientData(clientDataJSON: Uint8Array): ClientData {
  try {
    const decoded: unknown = JSON.parse(fromUtf8(clientDataJSON));
    if (typeof decoded === 'object' && decoded !== null && !Array.isArray(decoded))
      return decoded as ClientData;
  } catch {
    // fall through to the refusal below
  }
  throw new LatchError('malformed_client_data', 'clientDataJSON is not a JSON object');
}

/**
 * The assertion checks of WebAuthn Level 3, §7.2 "Verifying an Authentication Assertion", one
 * guard each, in the spec's order. Throws a LatchError naming the first check that fails.
 * https://www.w3.org/TR/webauthn-3/#sctn-verifying-assertion
 */
export async function verifyAssertion(
  assertion: Assertion,
  expected: AssertionExpectation,
  credential: PairedCredential | undefined,
): Promise<VerifiedAssertion> {
  // Steps 5–6: the credential must be one this host paired, and the one the assertion names.
  if (!credential || credential.id !== assertion.credentialId) {
    throw new LatchError('unknown_credential', 'the assertion is from a credential this host never paired');
  }

  // Steps 7–10: clientDataJSON is UTF-8 JSON.
  const clientDataJSON = fromBase64url(assertion.clientDataJSON);
  const clientData = decodeClientData(clientDataJSON);

  // Step 11: it is an assertion, not a registration or anything else signed by the same key.
  if (clientData.type !== 'webauthn.get') {
    throw new LatchError('wrong_type', 'clientData.type is not webauthn.get');
  }

  // Step 12: the challenge is the one we derived for this exact request and decision.
  if (typeof clientData.challenge !== 'string' || clientData.challenge !== toBase64url(expected.challenge)) {
    throw new LatchError('challenge_mismatch', 'the challenge is not the one for this request');
  }

  // Step 13: the ceremony ran on the PWA's origin.
  if (typeof clientData.origin !== 'string' || !expected.origins.includes(clientData.origin)) {
    throw new LatchError('origin_mismatch', 'the assertion was made on another origin');
  }

  // Step 14: not from inside another site's frame.
  if (clientData.crossOrigin !== undefined && clientData.crossOrigin !== false) {
    throw new LatchError('cross_origin', 'the assertion was made in a cross-origin frame');
  }
  if (clientData.topOrigin !== undefined) {
    throw new LatchError('top_origin_present', 'the assertion names a top-level origin, so it was framed');
  }

  const authenticatorData = fromBase64url(assertion.authenticatorData);
  if (authenticatorData.length < 37) {
    throw new LatchError('malformed_authenticator_data', 'authenticatorData is shorter than 37 bytes');
  }

  // Step 15: the authenticator scoped the credential to our RP ID.
  const rpIdHash = await sha256(utf8(expected.rpId));
  if (!constantTimeEqual(authenticatorData.subarray(0, 32), rpIdHash)) {
    throw new LatchError('rp_id_mismatch', 'rpIdHash is not the hash of our RP ID');
  }

  // Steps 16–17: a person was there, and proved who they are (Face ID, fingerprint, PIN).
  const flags = authenticatorData[32]!;
  if ((flags & FLAG_USER_PRESENT) === 0) {
    throw new LatchError('user_not_present', 'the UP flag is not set');
  }
  if ((flags & FLAG_USER_VERIFIED) === 0) {
    throw new LatchError('user_not_verified', 'the UV flag is not set');
  }

  // Steps 20–21: the signature over authenticatorData ‖ SHA-256(clientDataJSON).
  const signedData = concatBytes(authenticatorData, await sha256(clientDataJSON));
  const signatureValid = await verifyCoseSignature(
    fromBase64url(credential.publicKey),
    fromBase64url(assertion.signature),
    signedData,
  );
  if (!signatureValid) {
    throw new LatchError('bad_signature', 'the signature does not verify with the paired key');
  }

  // Step 22: a counter that did not move means a cloned authenticator (or a replay).
  const counter = new DataView(authenticatorData.buffer, authenticatorData.byteOffset + 33, 4).getUint32(0);
  if ((counter !== 0 || credential.counter !== 0) && counter <= credential.counter) {
    throw new LatchError('counter_not_increased', 'the signature counter did not increase');
  }

  return { counter };
}
