import type { LatchConfig } from '../config/config.ts';
import { hookTimeoutFor, longestWaitSeconds } from '../hooks/hookDeadline.ts';
import type { Policy } from '../policy/policy.ts';

/** The `timeout` Latch's hooks need on this host, for the longest a phone may take here. */
export function neededHookTimeout(
  config: LatchConfig,
  policy: Policy,
): { timeout: number; longestWait: number } {
  const longestWait = longestWaitSeconds(config.approvals.timeoutSeconds, policy.rules);
  return { timeout: hookTimeoutFor(longestWait), longestWait };
}
