/**
 * An agent kills a hook that outlives the hook's `timeout` and then runs the tool (Claude Code
 * and Codex both treat a killed hook as a non-blocking error). So a hook must have answered
 * before that moment, whatever the phone, the daemon or the policy's timeouts say.
 */

/** What Claude Code and Codex give a command hook whose settings name no `timeout`. */
export const AGENT_DEFAULT_HOOK_TIMEOUT_SECONDS = 600;

/**
 * The hook asks the daemon to wait at most this much less than the agent's timeout, so the
 * daemon's own "expired" deny arrives first, with time to spare for printing it.
 */
export const HOOK_MARGIN_SECONDS = 15;

/** The hook's own last resort: it prints a deny this long before the agent would kill it. */
export const HOOK_BACKSTOP_SECONDS = 5;

/** The `timeout` `latch install` writes, for the longest a phone may take on this host. */
export function hookTimeoutFor(longestWaitSeconds: number): number {
  return longestWaitSeconds + HOOK_MARGIN_SECONDS;
}

/** The longest the daemon is asked to wait for a phone, for a hook the agent kills at `agentTimeoutSeconds`. */
export function phoneWaitFor(agentTimeoutSeconds: number): number {
  return Math.max(1, agentTimeoutSeconds - HOOK_MARGIN_SECONDS);
}

/**
 * When the hook answers deny on its own, in ms after it started: HOOK_BACKSTOP_SECONDS before the
 * agent's kill, or halfway to it when the agent's timeout is under twice that.
 */
export function backstopAfterMs(agentTimeoutSeconds: number): number {
  return Math.max(agentTimeoutSeconds * 500, (agentTimeoutSeconds - HOOK_BACKSTOP_SECONDS) * 1000);
}

/**
 * When the hook stops waiting for the daemon, in ms after it started: half a second before its
 * backstop, time to print the daemon's deny, or halfway to a backstop nearer than a second.
 */
export function daemonDeadlineAfterMs(agentTimeoutSeconds: number): number {
  const backstop = backstopAfterMs(agentTimeoutSeconds);
  return backstop - Math.min(500, backstop / 2);
}

/**
 * The longest a phone may take on this host: the config's wait, or a policy rule's, whichever
 * is longer. A hook installed with less than `hookTimeoutFor` of it cuts those waits short.
 */
export function longestWaitSeconds(
  approvalsTimeoutSeconds: number,
  rules: readonly { timeoutSeconds?: number }[],
): number {
  return Math.max(approvalsTimeoutSeconds, ...rules.map((rule) => rule.timeoutSeconds ?? 0));
}
