import { attempt, LatchError, type Result } from '../errors.ts';
import type { ResumeVote } from '../messages/killSwitch.ts';
import type { PairedCredential } from '../webauthn/pairedCredential.ts';
import { verifyAssertion, type RelyingParty } from '../webauthn/verifyAssertion.ts';
import { resumeChallenge } from './resumeChallenge.ts';

export interface VoteExpectation extends RelyingParty {
  fleet: string;
  /** The id (kill-switch/freezeId) of the freeze the verifier itself holds in force. */
  freeze: string;
}

/**
 * Verifies one vote to resume. Counting distinct devices toward the quorum, and using each vote
 * once, is the caller's job: a device that votes twice is still one vote.
 */
export function verifyResumeVote(
  vote: ResumeVote,
  expected: VoteExpectation,
  credential: PairedCredential | undefined,
): Promise<Result<{ device: string; counter: number }>> {
  return attempt(async () => {
    // Said plainly before the challenge would say it anyway: votes die with their freeze.
    if (vote.fleet !== expected.fleet || vote.freeze !== expected.freeze) {
      throw new LatchError('stale_freeze', 'the vote is for another freeze');
    }
    const challenge = await resumeChallenge(expected);
    const { counter } = await verifyAssertion(
      vote.assertion,
      { challenge, origins: expected.origins, rpId: expected.rpId },
      credential,
    );
    if (credential!.device !== vote.device) {
      throw new LatchError('device_mismatch', 'the passkey belongs to another device');
    }
    return { device: vote.device, counter };
  });
}
