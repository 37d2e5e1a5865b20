import { f, type Infer } from '../schema/index.ts';
import { assertionSchema, digest, signerSchema } from './common.ts';
import { freezeEnvelopeSchema } from './envelopes.ts';
import { LIMITS } from './limits.ts';

/**
 * A phone's vote to resume, a WebAuthn assertion over kill-switch/resumeChallenge({ fleet, freeze }).
 * `freeze` is the id (kill-switch/freezeId) of the freeze it ends, computed from the envelope.
 */
export const resumeVoteSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  fleet: f.id(),
  freeze: digest(),
  device: f.id(),
  assertion: assertionSchema,
});
export type ResumeVote = Infer<typeof resumeVoteSchema>;

/**
 * The fleet's switch as the relay reports it. While frozen, `freeze` is the signed envelope in
 * force, from which phones and daemons compute the id their votes bind to; `epoch` is only the
 * relay's count of freezes, for people to read. `votes` are the devices that voted in this freeze.
 */
export const fleetStateSchema = /* @__PURE__ */ f.object({
  v: f.version(),
  fleet: f.id(),
  frozen: f.boolean(),
  epoch: f.integer(0, Number.MAX_SAFE_INTEGER),
  freeze: f.optional(freezeEnvelopeSchema),
  reason: f.optional(f.text(LIMITS.reasonBytes)),
  frozenAt: f.optional(f.timestamp()),
  frozenBy: f.optional(signerSchema),
  votes: f.array(f.id(), LIMITS.votesPerFreeze),
  needed: f.integer(1, LIMITS.votesPerFreeze),
});
export type FleetState = Infer<typeof fleetStateSchema>;
