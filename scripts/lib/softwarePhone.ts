import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import {
  exportPublicKey,
  generateEcdhKeyPair,
  generateSigningKeyPair,
  keyId,
} from '../../shared/keys/p256.ts';
import type { PushSubscriptionJson } from '../../shared/messages/common.ts';
import type { PairingCompletion, PairingOffer } from '../../shared/messages/pairing.ts';
import { derivePairingKeys, PAIRING_SECRET_BYTES } from '../../shared/pairing/pairingKeys.ts';
import { completionMac, offerMac } from '../../shared/pairing/pairingTranscript.ts';
import { registrationChallenge } from '../../shared/pairing/registrationChallenge.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { SoftwareAuthenticator } from './softwareAuthenticator.ts';

// A phone and a host in software. Here, not in tests/, since scripts/protocol-doc.ts makes the
// protocol's worked example with them, and scripts never depend on tests.

/** The relay origin the tests pretend the PWA is served from. */
export const TEST_ORIGIN = 'https://latch.test';
export const TEST_RP_ID = 'latch.test';

/** A phone as the PWA holds it: device key, encryption key, passkey. */
export interface TestPhone {
  id: string;
  name: string;
  deviceKeys: CryptoKeyPair;
  deviceKey: string;
  ecdhKeys: CryptoKeyPair;
  ecdhKey: string;
  ecdhKeyRaw: Uint8Array<ArrayBuffer>;
  authenticator: SoftwareAuthenticator;
}

export async function createPhone(
  name = 'Test phone',
  options: { counter?: 'increment' | 'zero' } = {},
): Promise<TestPhone> {
  const deviceKeys = await generateSigningKeyPair(false);
  const ecdhKeys = await generateEcdhKeyPair(false);
  const deviceKeyRaw = await exportPublicKey(deviceKeys.publicKey);
  const ecdhKeyRaw = await exportPublicKey(ecdhKeys.publicKey);
  return {
    id: await keyId(deviceKeyRaw),
    name,
    deviceKeys,
    deviceKey: toBase64url(deviceKeyRaw),
    ecdhKeys,
    ecdhKey: toBase64url(ecdhKeyRaw),
    ecdhKeyRaw,
    authenticator: await SoftwareAuthenticator.create(options),
  };
}

/** A host as the daemon holds it. */
export interface TestHost {
  id: string;
  hostKeys: CryptoKeyPair;
  hostKey: string;
}

export async function createHost(): Promise<TestHost> {
  const hostKeys = await generateSigningKeyPair(false);
  const raw = await exportPublicKey(hostKeys.publicKey);
  return { id: await keyId(raw), hostKeys, hostKey: toBase64url(raw) };
}

/** A fresh offer and its QR secret, as `latch pair` makes them: the offer id derives from the secret. */
export async function createOffer(
  host: TestHost,
  options: { fleet?: string; now?: number; ttlMs?: number } = {},
): Promise<{ offer: PairingOffer; secret: Uint8Array<ArrayBuffer> }> {
  const secret = randomBytes(PAIRING_SECRET_BYTES);
  const { offerId, offerToken, macKey } = await derivePairingKeys(secret);
  const unsigned = {
    v: PROTOCOL_VERSION,
    fleet: options.fleet ?? toBase64url(randomBytes(16)),
    host: host.id,
    hostName: 'build-box',
    offerId,
    hostKey: host.hostKey,
    offerToken,
    exp: (options.now ?? Date.now()) + (options.ttlMs ?? 10 * 60_000),
  };
  return { offer: { ...unsigned, offerMac: await offerMac(macKey, unsigned) }, secret };
}

/** The PWA's side of pairing: register the passkey over the device keys and MAC the transcript. */
export async function completePairing(
  phone: TestPhone,
  offer: PairingOffer,
  secret: Uint8Array<ArrayBuffer>,
  ceremony: { origin?: string; rpId?: string; userVerified?: boolean; push?: PushSubscriptionJson } = {},
): Promise<PairingCompletion> {
  const device = { id: phone.id, name: phone.name, deviceKey: phone.deviceKey, ecdhKey: phone.ecdhKey };
  const registration = await phone.authenticator.register({
    rpId: ceremony.rpId ?? TEST_RP_ID,
    origin: ceremony.origin ?? TEST_ORIGIN,
    challenge: await registrationChallenge(device),
    userVerified: ceremony.userVerified ?? true,
  });
  const unsigned = {
    v: PROTOCOL_VERSION,
    fleet: offer.fleet,
    offerId: offer.offerId,
    device,
    registration,
    ...(ceremony.push ? { push: ceremony.push } : {}),
  };
  const { macKey } = await derivePairingKeys(secret);
  return { ...unsigned, mac: await completionMac(macKey, offer, unsigned) };
}
