import type { BlockReason, GateAnswer } from '../socket/localApi.ts';

/**
 * A usage error — an unknown command or option, a missing argument, a value out of range — exits
 * with this code from every command, whether commander or Latch found it (docs/daemon.md#for-scripts).
 */
export const USAGE_EXIT = 2;

/**
 * `latch daemon` refused to start on a LastingFault (lastingFault.ts): state or config it cannot
 * trust, a socket directory others could reach into. sysexits' EX_CONFIG. Restarting cannot mend
 * it, so the systemd unit in docs/daemon.md names it in RestartPreventExitStatus: no restart
 * loop, one clear error.
 */
export const DAEMON_REFUSED_EXIT = 78;

/** `latch request`'s exit codes, documented in docs/daemon.md: scripts branch on them. */
export const REQUEST_EXIT = { approved: 0, denied: 1, usage: USAGE_EXIT, unavailable: 3 } as const;

/** Latch itself could not decide: nothing was asked, or nobody could be. Not a person's no. */
const UNAVAILABLE: ReadonlySet<BlockReason> = new Set<BlockReason>([
  'daemon_unreachable',
  'insecure_socket_path',
  'config_missing',
  'config_invalid',
  'policy_invalid',
  'relay_unreachable',
  'not_paired',
  'not_recorded',
  'invalid_request',
]);

export function isUnavailable(answer: GateAnswer): boolean {
  return answer.decision === 'deny' && UNAVAILABLE.has(answer.blockReason);
}
