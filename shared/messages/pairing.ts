import { f, type Infer } from '../schema/index.ts';
import { digest, p256PublicKey, pushSubscriptionSchema } from './common.ts';
import { pairConfirmEnvelopeSchema } from './envelopes.ts';
import { LIMITS } from './limits.ts';

/**
 * Daemon → relay → phone. The relay stores it and hands it to whoever presents `offerToken`;
 * `offerMac`, keyed by the QR secret the relay never sees, lets the phone trust `hostKey` and
 * `fleet`. `offerId` and `offerToken` derive from the QR secret (`derivePairingKeys`), so the
 * phone finds the offer from the link alone.
 */
export const pairingOfferSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  fleet: f.id(),
  host: f.id(),
  hostName: f.text(LIMITS.nameBytes),
  offerId: f.id(),
  hostKey: p256PublicKey(),
  offerToken: digest(),
  exp: f.timestamp(),
  offerMac: digest(),
});
export type PairingOffer = Infer<typeof pairingOfferSchema>;

/** What a phone brings to a fleet: its keys, named by the device id derived from `deviceKey`. */
export const deviceKeysSchema = /* @__PURE__ */ f.object({
  id: f.id(),
  name: f.text(LIMITS.nameBytes),
  deviceKey: p256PublicKey(),
  ecdhKey: p256PublicKey(),
});
export type DeviceKeys = Infer<typeof deviceKeysSchema>;

/** A passkey's creation (AuthenticatorAttestationResponse), reduced to what the host verifies. */
export const registrationSchema = /* @__PURE__ */ f.object({
  credentialId: f.base64url(1, LIMITS.credentialIdBytes),
  clientDataJSON: f.base64url(1, LIMITS.clientDataBytes),
  attestationObject: f.base64url(1, LIMITS.attestationObjectBytes),
  transports: f.optional(
    f.array(f.oneOf(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']), 8),
  ),
});
export type Registration = Infer<typeof registrationSchema>;

/** Phone → relay → daemon, under a MAC keyed by the QR secret. */
export const pairingCompletionSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  fleet: f.id(),
  offerId: f.id(),
  device: deviceKeysSchema,
  registration: registrationSchema,
  push: f.optional(pushSubscriptionSchema),
  mac: digest(),
});
export type PairingCompletion = Infer<typeof pairingCompletionSchema>;

/**
 * Daemon → relay once the MAC checked out. `quorum` is how many phones this host requires to
 * resume after a freeze; the relay shows progress against the largest quorum of its hosts, and
 * each daemon enforces its own.
 */
export const pairConfirmRequestSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  envelope: pairConfirmEnvelopeSchema,
  // No more than a fleet's phones: a quorum above them could never resume a freeze.
  quorum: f.integer(1, LIMITS.devicesPerFleet),
});
export type PairConfirmRequest = Infer<typeof pairConfirmRequestSchema>;
