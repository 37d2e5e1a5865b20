import { f, type Infer } from '../schema/index.ts';
import { capabilityTokenSchema } from './approvals.ts';
import { assertionSchema, digest } from './common.ts';
import { denyEnvelopeSchema, freezeEnvelopeSchema, revokeGrantEnvelopeSchema } from './envelopes.ts';
import { fleetStateSchema, resumeVoteSchema } from './killSwitch.ts';
import { pairingCompletionSchema } from './pairing.ts';
import { LIMITS } from './limits.ts';

/**
 * Relay → daemon, over the daemon's WebSocket. The relay forwards what phones sent; the daemon
 * verifies approvals and resume votes itself, and honours denies and freezes in any case.
 */
export const hostEventSchema = /* @__PURE__ */ f.variant('type', {
  state: f.object({ v: f.version(), type: f.literal('state'), state: fleetStateSchema }),
  approved: f.object({
    v: f.version(),
    type: f.literal('approved'),
    requestId: f.id(),
    token: capabilityTokenSchema,
    at: f.timestamp(),
  }),
  denied: f.object({
    v: f.version(),
    type: f.literal('denied'),
    requestId: f.id(),
    envelope: denyEnvelopeSchema,
    at: f.timestamp(),
  }),
  expired: f.object({ v: f.version(), type: f.literal('expired'), requestId: f.id(), at: f.timestamp() }),
  grant_revoked: f.object({
    v: f.version(),
    type: f.literal('grant_revoked'),
    envelope: revokeGrantEnvelopeSchema,
    at: f.timestamp(),
  }),
  /**
   * A phone revoked another (or itself) in the app. The assertion is the one the revoking phone
   * made with Face ID over revokeChallenge: each host checks it against its own record of that
   * phone's passkey before it stops trusting the revoked one.
   */
  device_revoked: f.object({
    v: f.version(),
    type: f.literal('device_revoked'),
    device: f.id(),
    by: f.id(),
    assertion: assertionSchema,
    at: f.timestamp(),
  }),
  frozen: f.object({
    v: f.version(),
    type: f.literal('frozen'),
    /** The relay's count of freezes, for the log: a daemon names a freeze by its envelope. */
    epoch: f.integer(0, Number.MAX_SAFE_INTEGER),
    envelope: freezeEnvelopeSchema,
    at: f.timestamp(),
  }),
  resumed: f.object({
    v: f.version(),
    type: f.literal('resumed'),
    /** The id (kill-switch/freezeId) of the freeze the votes end. */
    freeze: digest(),
    votes: f.array(resumeVoteSchema, LIMITS.votesPerFreeze),
    at: f.timestamp(),
  }),
  paired: f.object({ v: f.version(), type: f.literal('paired'), completion: pairingCompletionSchema }),
});
export type HostEvent = Infer<typeof hostEventSchema>;

/** One frame on a daemon's WebSocket: an event and its place in the fleet's event log. */
export const hostFrameSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  seq: f.integer(0, Number.MAX_SAFE_INTEGER),
  event: hostEventSchema,
});
export type HostFrame = Infer<typeof hostFrameSchema>;
