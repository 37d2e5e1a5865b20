import { randomInt } from 'node:crypto';
import type { RiskLevel } from '../../shared/messages/common.ts';

/**
 * A question typed on the terminal when no phone can be reached (the seed's "local challenge"):
 * it proves a person is at the keyboard, not that they are who the passkey says. Low and medium
 * risk: a sum. High: a 10 s review, then the target's name. Critical: 30 s, then the name.
 */
export interface LocalChallenge {
  prompt: string;
  answer: string;
  /** The earliest moment an answer is accepted (the review time). */
  notBefore: number;
}

export function localChallenge(risk: RiskLevel, target: string, now: number): LocalChallenge {
  if (risk === 'low' || risk === 'medium') {
    const a = randomInt(2, 20);
    const b = randomInt(2, 20);
    return { prompt: `To approve, solve: what is ${a} + ${b}?`, answer: String(a + b), notBefore: now };
  }
  const reviewSeconds = risk === 'critical' ? 30 : 10;
  return {
    prompt: `Review the request above for ${reviewSeconds} s, then type "${target}" to approve.`,
    answer: target,
    notBefore: now + reviewSeconds * 1000,
  };
}
