// The wire protocol spoken by daemon/, relay/ and pwa/. Runs unchanged in Node, workerd and browsers.
export { LatchError, type LatchErrorCode, type Result } from './errors.ts';
export { PROTOCOL_VERSION, type ProtocolVersion } from './version.ts';

export { fromBase64url, toBase64url } from './encoding/base64url.ts';
export { canonicalBytes, canonicalHash, canonicalize, type JsonValue } from './canonical/canonicalize.ts';
export { sanitizeText, type SanitizedText, type SanitizeOptions } from './text/sanitizeText.ts';
export { validateId } from './text/validateId.ts';

export { MAX_BODY_BYTES, parse, parseJson } from './schema/parse.ts';
export { LIMITS } from './messages/limits.ts';
export * from './messages/common.ts';
export * from './messages/pairing.ts';
export * from './messages/approvals.ts';
export * from './messages/envelopes.ts';
export * from './messages/killSwitch.ts';
export * from './messages/events.ts';

export { exportPublicKey, generateEcdhKeyPair, generateSigningKeyPair, keyId } from './keys/p256.ts';
export { signEnvelope } from './envelopes/signEnvelope.ts';
export { verifyEnvelope, type EnvelopeExpectation } from './envelopes/verifyEnvelope.ts';
export {
  DEVICE_AUTH_HEADERS,
  DEVICE_AUTH_MAX_SKEW_MS,
  signDeviceRequest,
  verifyDeviceRequest,
} from './device-auth/deviceRequest.ts';
export { openRequestDetails, sealRequestDetails, type BoxContext } from './e2e/requestDetailsBox.ts';

export { approvalChallenge, type ApprovalBinding } from './approvals/approvalChallenge.ts';
export { approvalBinding, detailsBinding, type BoundRequest } from './approvals/approvalBinding.ts';
export { REVIEW_SECONDS } from './approvals/reviewSeconds.ts';
export { requestHash } from './approvals/requestHash.ts';
export { MemorySingleUseStore, type SingleUseStore } from './approvals/singleUseStore.ts';
export {
  verifyCapabilityToken,
  type TokenExpectation,
  type VerifiedToken,
} from './approvals/verifyCapabilityToken.ts';
export type { PairedCredential } from './webauthn/pairedCredential.ts';

export { freezeId } from './kill-switch/freezeId.ts';
export { resumeChallenge } from './kill-switch/resumeChallenge.ts';
export { verifyResumeVote, type VoteExpectation } from './kill-switch/verifyResumeVote.ts';

export { derivePairingKeys, PAIRING_SECRET_BYTES, type PairingKeys } from './pairing/pairingKeys.ts';
export { completionMac, offerMac, shortCode } from './pairing/pairingTranscript.ts';
export { parsePairingLink, pairingLink, type PairingLink } from './pairing/pairingLink.ts';
export { verifyPairingOffer } from './pairing/verifyPairingOffer.ts';
export { registrationChallenge } from './pairing/registrationChallenge.ts';
export { verifyPairingCompletion, type PairedDevice } from './pairing/verifyPairingCompletion.ts';
export { MESSAGE_SCHEMAS } from './messages/catalog.ts';
export * from './messages/relayViews.ts';
export { verifyPasskeyRegistration } from './pairing/verifyPasskeyRegistration.ts';
