import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import type { Assertion } from '../../shared/messages/common.ts';
import type { Registration } from '../../shared/messages/pairing.ts';
import { registrationChallenge } from '../../shared/pairing/registrationChallenge.ts';
import { COSE_ALGORITHMS } from '../../shared/webauthn/coseSignature.ts';
import type { DeviceIdentity, Passkey } from './keystore.ts';

/**
 * Creates this phone's passkey (Face ID, fingerprint), bound by its challenge to the phone's
 * device and encryption keys. User verification is required; a resident key is preferred.
 */
export async function createPasskey(identity: DeviceIdentity): Promise<Passkey> {
  const challenge = await registrationChallenge(identity);
  const response = await startRegistration({
    optionsJSON: {
      challenge: toBase64url(challenge),
      rp: { id: location.hostname, name: 'Latch' },
      user: {
        id: toBase64url(randomBytes(16)),
        name: `Latch · ${identity.name}`,
        displayName: identity.name,
      },
      // ES256 and RS256: what the daemon and the relay verify assertions for.
      pubKeyCredParams: Object.values(COSE_ALGORITHMS).map((alg) => ({ type: 'public-key', alg })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      attestation: 'none',
      timeout: 120_000,
    },
  });
  const transports = response.response.transports?.filter(
    (transport): transport is NonNullable<Registration['transports']>[number] =>
      ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'].includes(transport),
  );
  return {
    credentialId: response.id,
    registration: {
      credentialId: response.id,
      clientDataJSON: response.response.clientDataJSON,
      attestationObject: response.response.attestationObject,
      ...(transports && transports.length ? { transports } : {}),
    },
  };
}

/** Signs a challenge with the passkey (the Face ID moment): an approval or a vote to resume. */
export async function signWithPasskey(passkey: Passkey, challenge: Uint8Array): Promise<Assertion> {
  const response = await startAuthentication({
    optionsJSON: {
      challenge: toBase64url(challenge),
      rpId: location.hostname,
      allowCredentials: [{ id: passkey.credentialId, type: 'public-key' }],
      userVerification: 'required',
      timeout: 120_000,
    },
  });
  return {
    credentialId: response.id,
    clientDataJSON: response.response.clientDataJSON,
    authenticatorData: response.response.authenticatorData,
    signature: response.response.signature,
    ...(response.response.userHandle ? { userHandle: response.response.userHandle } : {}),
  };
}
