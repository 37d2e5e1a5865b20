import type { Grant } from '../messages/approvals.ts';

/**
 * How long each grant lasts (docs/policy.md#grants): the host enforces it, the phone shows it. A
 * session grant lapses too, since an agent session has no end that Latch sees.
 */
export const GRANT_LIFETIME_MS: Record<Grant, number> = {
  half_hour: 30 * 60_000,
  session: 12 * 3600_000,
};
