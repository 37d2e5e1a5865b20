import { verifyRegistrationResponse } from '@simplewebauthn/server';
import { toBase64url } from '../encoding/base64url.ts';
import { LatchError } from '../errors.ts';
import type { DeviceKeys, Registration } from '../messages/pairing.ts';
import { COSE_ALGORITHMS, isAcceptedCoseKey } from '../webauthn/coseSignature.ts';
import type { PairedCredential } from '../webauthn/pairedCredential.ts';
import type { RelyingParty } from '../webauthn/verifyAssertion.ts';
import { registrationChallenge } from './registrationChallenge.ts';

/**
 * Checks a phone's passkey creation: made over this phone's device and encryption keys, on our
 * origin and RP ID, with user verification. Returns the credential to verify its assertions with.
 * Throws `registration_failed`. Daemon and relay both run it; only the daemon also checks the MAC
 * that proves who sent it.
 */
export async function verifyPasskeyRegistration(
  device: Pick<DeviceKeys, 'id' | 'deviceKey' | 'ecdhKey'>,
  registration: Registration,
  relying: RelyingParty,
): Promise<PairedCredential> {
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response: {
        id: registration.credentialId,
        rawId: registration.credentialId,
        type: 'public-key',
        response: {
          clientDataJSON: registration.clientDataJSON,
          attestationObject: registration.attestationObject,
        },
        clientExtensionResults: {},
      },
      expectedChallenge: toBase64url(await registrationChallenge(device)),
      expectedOrigin: [...relying.origins],
      expectedRPID: relying.rpId,
      requireUserVerification: true,
      // What the PWA offers, and all that assertions are verified for (webauthn/coseSignature).
      supportedAlgorithmIDs: Object.values(COSE_ALGORITHMS),
    });
  } catch (error) {
    throw new LatchError(
      'registration_failed',
      `the passkey registration does not verify: ${(error as Error).message}`,
    );
  }
  if (!verified.verified || verified.registrationInfo.credential.id !== registration.credentialId) {
    throw new LatchError('registration_failed', 'the passkey registration does not verify');
  }
  const { credential } = verified.registrationInfo;
  // The library checks the algorithm, not the key: an RSA key with exponent 1 would let anyone
  // who reads the public key (the relay stores it) sign approvals.
  if (!isAcceptedCoseKey(credential.publicKey)) {
    throw new LatchError(
      'registration_failed',
      'the passkey’s key is too weak: an RSA key needs 2048 to 8192 bits and the exponent 65537',
    );
  }
  return {
    id: credential.id,
    publicKey: toBase64url(credential.publicKey),
    counter: credential.counter,
    device: device.id,
  };
}
