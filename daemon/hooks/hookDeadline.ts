import { readFileSync } from 'node:fs';

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

/** The shells an agent runs a hook's command with (Claude Code `sh -c`, Codex `$SHELL -lc`). */
const HOOK_SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'fish', 'ksh', 'mksh', 'ash', 'busybox']);
/** Clock ticks per second in /proc's start times: USER_HZ, 100 on every Linux. */
const TICKS_PER_SECOND = 100;

/**
 * When the agent started this hook, as far as can be told: when the shell that runs the hook's
 * command started, since the agent's timeout runs from then (Codex's `$SHELL -lc` runs the
 * user's login files first, which may take seconds of it); else when this process started. The
 * parent is that shell when its arguments hold this script's path, whatever the shell's name (a
 * list of names alone left nu, xonsh or a renamed bash out, and the agent killed the hook first),
 * or when it is a shell by name; one older than the agent's timeout did not start for this hook.
 */
export function hookStartedAt(agentTimeoutSeconds: number, now = Date.now()): number {
  const ownStart = performance.timeOrigin;
  try {
    const parent = process.ppid;
    const script = process.argv[1];
    const parentArgs = readFileSync(`/proc/${parent}/cmdline`, 'utf8').split('\0').slice(1);
    const runsThisHook = !!script && parentArgs.some((arg) => arg.includes(script));
    // A shell by name too: a bare `latch hook …` through a PATH shim names no script path.
    if (!runsThisHook && !HOOK_SHELLS.has(readFileSync(`/proc/${parent}/comm`, 'utf8').trim()))
      return ownStart;
    const stat = readFileSync(`/proc/${parent}/stat`, 'utf8');
    // Field 22, start time in ticks since boot; the fields after the name start at field 3.
    const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const uptimeSeconds = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
    const parentStart = now - (uptimeSeconds - startTicks / TICKS_PER_SECOND) * 1000;
    const ours = Number.isFinite(parentStart) && now - parentStart <= agentTimeoutSeconds * 1000;
    return ours ? Math.min(parentStart, ownStart) : ownStart;
  } catch {
    return ownStart; // no /proc (not Linux), or the parent is gone
  }
}
