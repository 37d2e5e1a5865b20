import { f, type Infer } from '../schema/index.ts';
import { LIMITS } from './limits.ts';

export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** An uncompressed P-256 point (0x04 ‖ x ‖ y), the form Web Crypto exports as 'raw'. */
export const p256PublicKey = /* @__NO_SIDE_EFFECTS__ */ () => f.base64url(65);
/** 128 random bits. */
export const nonce = /* @__NO_SIDE_EFFECTS__ */ () => f.base64url(16);
/** A SHA-256 digest. */
export const digest = /* @__NO_SIDE_EFFECTS__ */ () => f.base64url(32);

/** Who signed an envelope: a phone's device key or a host's identity key. */
export const signerSchema = /* @__PURE__ */ f.object({
  role: f.oneOf(['device', 'host']),
  id: f.id(),
});
export type Signer = Infer<typeof signerSchema>;

/**
 * A WebAuthn assertion (AuthenticatorAssertionResponse) as it travels: the three byte strings
 * the signature covers, and the credential that made it.
 */
export const assertionSchema = /* @__PURE__ */ f.object({
  credentialId: f.base64url(1, LIMITS.credentialIdBytes),
  clientDataJSON: f.base64url(1, LIMITS.clientDataBytes),
  authenticatorData: f.base64url(37, LIMITS.authenticatorDataBytes),
  signature: f.base64url(1, LIMITS.signatureBytes),
  userHandle: f.optional(f.base64url(1, LIMITS.userHandleBytes)),
});
export type Assertion = Infer<typeof assertionSchema>;

/** A Web Push subscription (PushSubscription.toJSON() without expirationTime). */
export const pushSubscriptionSchema = /* @__PURE__ */ f.object({
  endpoint: f.url(LIMITS.urlBytes),
  keys: f.object({ p256dh: p256PublicKey(), auth: f.base64url(16) }),
});
export type PushSubscriptionJson = Infer<typeof pushSubscriptionSchema>;
