import type { RiskLevel } from '../messages/common.ts';

/**
 * Seconds a person reviews a request before an approval of it can be given, by risk (design.md:
 * friction by risk level): on the phone before Approve is enabled, at the terminal before the
 * local challenge takes an answer.
 */
export const REVIEW_SECONDS: Readonly<Record<RiskLevel, number>> = {
  low: 0,
  medium: 0,
  high: 10,
  critical: 30,
};
