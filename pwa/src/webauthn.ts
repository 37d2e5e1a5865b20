import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import type { Assertion } from '../../shared/messages/common.ts';
import type { Registration } from '../../shared/messages/pairing.ts';
import { registrationChallenge } from '../../shared/pairing/registrationChallenge.ts';
import { COSE_ALGORITHMS } from '../../shared/webauthn/coseSignature.ts';
import type { DeviceIdentity, Passkey } from './keystore.ts';

// The platform's navigator.credentials, called directly: a wrapper library cost the app 2.5 KB
// gzipped for what is here a base64url conversion each way. A cancelled Face ID rejects with the
// platform's own NotAllowedError, which the screens tell apart.

/** An ArrayBuffer from the authenticator, as base64url for the wire. */
const encoded = (buffer: ArrayBuffer) => toBase64url(new Uint8Array(buffer));

/**
 * Creates this phone's passkey (Face ID, fingerprint), bound by its challenge to the phone's
 * device and encryption keys. User verification is required; a resident key is preferred.
 */
export async function createPasskey(identity: DeviceIdentity): Promise<Passkey> {
  const challenge = await registrationChallenge(identity);
  const credential = (await navigator.credentials.create({
    publicKey: {
      challenge: new Uint8Array(challenge),
      rp: { id: location.hostname, name: 'Latch' },
      user: { id: randomBytes(16), name: `Latch · ${identity.name}`, displayName: identity.name },
      // ES256 and RS256: what the daemon and the relay verify assertions for.
      pubKeyCredParams: Object.values(COSE_ALGORITHMS).map((alg) => ({ type: 'public-key', alg })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      attestation: 'none',
      timeout: 120_000,
    },
  })) as PublicKeyCredential;
  const response = credential.response as AuthenticatorAttestationResponse;
  const transports = response
    .getTransports?.()
    .filter((transport): transport is NonNullable<Registration['transports']>[number] =>
      ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'].includes(transport),
    );
  return {
    credentialId: credential.id,
    registration: {
      credentialId: credential.id,
      clientDataJSON: encoded(response.clientDataJSON),
      attestationObject: encoded(response.attestationObject),
      ...(transports && transports.length ? { transports } : {}),
    },
  };
}

/** Signs a challenge with the passkey (the Face ID moment): an approval or a vote to resume. */
export async function signWithPasskey(passkey: Passkey, challenge: Uint8Array): Promise<Assertion> {
  const credential = (await navigator.credentials.get({
    publicKey: {
      challenge: new Uint8Array(challenge),
      rpId: location.hostname,
      allowCredentials: [{ id: fromBase64url(passkey.credentialId), type: 'public-key' }],
      userVerification: 'required',
      timeout: 120_000,
    },
  })) as PublicKeyCredential;
  const response = credential.response as AuthenticatorAssertionResponse;
  return {
    credentialId: credential.id,
    clientDataJSON: encoded(response.clientDataJSON),
    authenticatorData: encoded(response.authenticatorData),
    signature: encoded(response.signature),
    ...(response.userHandle ? { userHandle: encoded(response.userHandle) } : {}),
  };
}
