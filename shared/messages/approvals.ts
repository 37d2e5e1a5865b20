import { f, type Infer } from '../schema/index.ts';
import { assertionSchema, digest, nonce, RISK_LEVELS } from './common.ts';
import { LIMITS } from './limits.ts';

export const DECISIONS = ['approve', 'deny'] as const;
export type Decision = (typeof DECISIONS)[number];

/**
 * What the person reads, sealed end to end from the daemon to each phone. Every text is already
 * clean, and `requestHash` is SHA-256 over this object's canonical JSON, so the phone shows
 * exactly what its signature commits to. `shortened` says cleaning changed something.
 */
export const requestDetailsSchema = f.object({
  v: f.version(),
  fleet: f.id(),
  host: f.id(),
  hostName: f.text(LIMITS.nameBytes),
  requestId: f.id(),
  agent: f.text(LIMITS.nameBytes),
  tool: f.text(LIMITS.nameBytes),
  title: f.text(LIMITS.titleBytes),
  detail: f.text(LIMITS.detailBytes, { multiline: true }),
  cwd: f.optional(f.text(LIMITS.cwdBytes)),
  /** The name a person types to approve a critical request, e.g. the branch or the database. */
  target: f.optional(f.text(LIMITS.targetBytes)),
  risk: f.oneOf(RISK_LEVELS),
  createdAt: f.timestamp(),
  exp: f.timestamp(),
  nonce: nonce(),
  shortened: f.boolean(),
});
export type RequestDetails = Infer<typeof requestDetailsSchema>;

/** Sealed details for one phone: see e2e/sealForDevice. */
export const sealedForDeviceSchema = f.object({
  device: f.id(),
  box: f.base64url(1, LIMITS.sealedBoxBytes),
});
export type SealedForDevice = Infer<typeof sealedForDeviceSchema>;

/**
 * Daemon → relay. The relay sees ids, times, a risk level and ciphertext; never the command.
 * Requests with the same `dedupKey` (one agent session and tool call) join the pending one.
 */
export const approvalRequestSchema = f.object({
  v: f.version(),
  fleet: f.id(),
  host: f.id(),
  requestId: f.id(),
  conversation: f.id(),
  dedupKey: f.id(),
  risk: f.oneOf(RISK_LEVELS),
  createdAt: f.timestamp(),
  exp: f.timestamp(),
  requestHash: digest(),
  nonce: nonce(),
  sealed: f.array(sealedForDeviceSchema, LIMITS.devicesPerFleet),
});
export type ApprovalRequest = Infer<typeof approvalRequestSchema>;

/**
 * Phone → relay → daemon: a WebAuthn assertion whose challenge commits to one request and one
 * decision (approvals/approvalChallenge). The daemon verifies it itself and uses it once.
 */
export const capabilityTokenSchema = f.object({
  v: f.version(),
  fleet: f.id(),
  host: f.id(),
  requestId: f.id(),
  decision: f.oneOf(DECISIONS),
  device: f.id(),
  assertion: assertionSchema,
});
export type CapabilityToken = Infer<typeof capabilityTokenSchema>;
