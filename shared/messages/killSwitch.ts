import { f, type Infer } from '../schema/index.ts';
import { assertionSchema, signerSchema } from './common.ts';
import { LIMITS } from './limits.ts';

const epoch = () => f.integer(0, Number.MAX_SAFE_INTEGER);

/** A phone's vote to resume, a WebAuthn assertion over kill-switch/resumeChallenge({ fleet, epoch }). */
export const resumeVoteSchema = f.object({
  v: f.version(),
  fleet: f.id(),
  epoch: epoch(),
  device: f.id(),
  assertion: assertionSchema,
});
export type ResumeVote = Infer<typeof resumeVoteSchema>;

/**
 * The fleet's switch as the relay reports it. Every freeze starts a new epoch, so a vote cast
 * before it counts for nothing after it. `votes` are the devices that voted in this epoch.
 */
export const fleetStateSchema = f.object({
  v: f.version(),
  fleet: f.id(),
  frozen: f.boolean(),
  epoch: epoch(),
  reason: f.optional(f.text(LIMITS.reasonBytes)),
  frozenAt: f.optional(f.timestamp()),
  frozenBy: f.optional(signerSchema),
  votes: f.array(f.id(), LIMITS.votesPerEpoch),
  needed: f.integer(1, LIMITS.votesPerEpoch),
});
export type FleetState = Infer<typeof fleetStateSchema>;
