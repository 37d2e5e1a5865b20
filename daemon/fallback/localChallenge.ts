import { randomInt } from 'node:crypto';
import { REVIEW_SECONDS } from '../../shared/approvals/reviewSeconds.ts';
import type { RiskLevel } from '../../shared/messages/common.ts';

/**
 * A question typed on the terminal when no phone can be reached (the seed's "local challenge"):
 * it proves a person is at the keyboard, not that they are who the passkey says. Low and medium
 * risk: a sum. High and critical: a review (REVIEW_SECONDS, as on the phone), then the target's name.
 */
export interface LocalChallenge {
  prompt: string;
  answer: string;
  /** The earliest moment an answer is accepted (the review time), on the wall clock. */
  notBefore: number;
  /**
   * The review time again, to be measured on the monotonic clock from when the challenge was
   * shown: a wall clock set ahead meanwhile does not end it (review rt).
   */
  reviewMs: number;
}

export function localChallenge(risk: RiskLevel, target: string, now: number): LocalChallenge {
  if (risk === 'low' || risk === 'medium') {
    const a = randomInt(2, 20);
    const b = randomInt(2, 20);
    return {
      prompt: `To approve, solve: what is ${a} + ${b}?`,
      answer: String(a + b),
      notBefore: now,
      reviewMs: 0,
    };
  }
  const reviewSeconds = REVIEW_SECONDS[risk];
  return {
    prompt: `Review the request above for ${reviewSeconds} s, then type "${target}" to approve.`,
    answer: target,
    notBefore: now + reviewSeconds * 1000,
    reviewMs: reviewSeconds * 1000,
  };
}
