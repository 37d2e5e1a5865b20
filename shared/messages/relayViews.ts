import { f, type Infer } from '../schema/index.ts';
import { DECISIONS } from './approvals.ts';
import { RISK_LEVELS } from './common.ts';
import { LIMITS } from './limits.ts';
import { pairingCompletionSchema, pairingOfferSchema } from './pairing.ts';

/** `withdrawn`: its host withdrew it because nobody waits for the answer any more. */
export const REQUEST_STATES = ['pending', 'approved', 'denied', 'expired', 'withdrawn'] as const;
export type RequestState = (typeof REQUEST_STATES)[number];

/**
 * A request as the relay shows it to one phone: metadata in the clear, the details only as that
 * phone's sealed box.
 */
export const requestViewSchema = /* @__PURE__ */ f.object({
  requestId: f.id(),
  host: f.id(),
  conversation: f.id(),
  risk: f.oneOf(RISK_LEVELS),
  createdAt: f.timestamp(),
  exp: f.timestamp(),
  state: f.oneOf(REQUEST_STATES),
  decision: f.optional(f.oneOf(DECISIONS)),
  decidedBy: f.optional(f.id()),
  decidedAt: f.optional(f.timestamp()),
  box: f.optional(f.base64url(1, LIMITS.sealedBoxBytes)),
});
export type RequestView = Infer<typeof requestViewSchema>;

/**
 * The most requests one list holds. A full pending list leaves out requests still pending (each
 * host's oldest, the relay's listRequests), so what it lacks is not known to have ended.
 */
export const MOST_LISTED = 1000;

export const requestListSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  requests: f.array(requestViewSchema, MOST_LISTED),
});
export type RequestList = Infer<typeof requestListSchema>;

/** The devices and hosts of a fleet, for the phone's devices screen. */
export const memberViewSchema = /* @__PURE__ */ f.object({
  id: f.id(),
  name: f.text(LIMITS.nameBytes),
  createdAt: f.timestamp(),
  revoked: f.boolean(),
});
export type MemberView = Infer<typeof memberViewSchema>;

export const membersSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  devices: f.array(memberViewSchema, LIMITS.devicesPerFleet * 4),
  hosts: f.array(memberViewSchema, 256),
});
export type Members = Infer<typeof membersSchema>;

/** The relay's answer to a pairing offer's poll (daemon) or fetch (phone). */
export const offerStatusSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  offer: pairingOfferSchema,
  completion: f.optional(pairingCompletionSchema),
  confirmed: f.boolean(),
});
export type OfferStatus = Infer<typeof offerStatusSchema>;

/** The relay's answer to a new approval request. `joined`: it joined a pending duplicate. */
export const requestCreatedSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  requestId: f.id(),
  joined: f.boolean(),
});
export type RequestCreated = Infer<typeof requestCreatedSchema>;

/** The relay's answer to a host that withdraws one of its pending requests. */
export const requestWithdrawnSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  requestId: f.id(),
  state: f.literal('withdrawn'),
});
export type RequestWithdrawn = Infer<typeof requestWithdrawnSchema>;

/** The relay's answer to a confirmed pairing: the host's bearer token, on its first pairing only. */
export const pairConfirmedSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  hostToken: f.optional(f.base64url(32)),
});
export type PairConfirmed = Infer<typeof pairConfirmedSchema>;

/** The relay's answer to a new pairing offer. */
export const offerCreatedSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  offerId: f.id(),
  exp: f.timestamp(),
});
export type OfferCreated = Infer<typeof offerCreatedSchema>;

/** The relay's answer to a host that gave up on its pairing offer: the phone on it learns so. */
export const offerWithdrawnSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  offerId: f.id(),
  state: f.literal('withdrawn'),
});
export type OfferWithdrawn = Infer<typeof offerWithdrawnSchema>;

/** `GET /v1/config`: the relay's VAPID public key, which a push subscription names (none: no push). */
export const relayConfigSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  vapidPublicKey: f.optional(f.base64url(65)),
});
