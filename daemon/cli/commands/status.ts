import { callDaemon } from '../../socket/daemonClient.ts';
import type { DaemonStatus } from '../../socket/localApi.ts';
import { printJson } from '../printJson.ts';

/**
 * Exit codes of `latch status`: they compose in a shell check. Unreachable is 2, as for a usage
 * error: both say "no state to report", and scripts already test `status` for 0, 1 and 2.
 */
export const STATUS_EXIT = { running: 0, frozen: 1, unreachable: 2 } as const;

/** `latch status --json`'s one object (docs/daemon.md#for-scripts). */
export type StatusJson =
  | {
      state: 'armed' | 'frozen';
      /** Why the fleet froze; null when it is not frozen, or no reason was given. */
      reason: string | null;
      epoch: number;
      relay: DaemonStatus['relay'];
      devices: number;
      revokesAsked: number;
      quorum: number;
      pending: number;
      policy: DaemonStatus['policy'];
      config: DaemonStatus['config'];
      auditOverBudget: number;
    }
  | { state: 'unreachable'; error: string };

function asJson(status: DaemonStatus): StatusJson {
  const { frozen, reason, epoch, relay, devices, revokesAsked, quorum, pending, policy, config } = status;
  // A daemon of an older version does not say.
  const auditOverBudget = status.auditOverBudget ?? 0;
  return {
    state: frozen ? 'frozen' : 'armed',
    reason,
    epoch,
    relay,
    devices,
    revokesAsked,
    quorum,
    pending,
    policy,
    config,
    auditOverBudget,
  };
}

/** What `latch status` and `latch doctor` say when the audit history is kept beyond its budget. */
export function overBudgetText(files: number): string {
  return `the audit history is over its budget: ${files} rotated file${files === 1 ? '' : 's'} beyond audit.keep_files, kept because their last line is younger than audit.keep_hours; something wrote a lot lately: see who in audit.log (latch audit verify still checks every kept file)`;
}

function asText(status: DaemonStatus): string {
  const asked = status.revokesAsked
    ? ` (a revoke of ${status.revokesAsked} asked in the app, not checked here: see latch devices)`
    : '';
  const relay = `relay ${status.relay}, ${status.devices} phone${status.devices === 1 ? '' : 's'}${asked}, quorum ${status.quorum}`;
  const over = status.auditOverBudget ? `\nwarning: ${overBudgetText(status.auditOverBudget)}` : '';
  if (status.frozen)
    return `frozen: ${status.reason ?? 'no reason given'} (epoch ${status.epoch}; ${relay})${over}`;
  const pending = (['policy', 'config'] as const)
    .filter((file) => status[file] !== 'ok')
    .map((file) => `, ${file} ${status[file].replace('_', ' ')}`)
    .join('');
  return `running: armed (${relay}, ${status.pending} waiting${pending})${over}`;
}

export async function run(options: { json?: boolean }): Promise<void> {
  let status: DaemonStatus;
  try {
    status = await callDaemon<DaemonStatus>('GET', '/v1/status', undefined, { timeoutMs: 5000 });
  } catch (error) {
    const message = (error as Error).message;
    if (options.json) printJson({ state: 'unreachable', error: message } satisfies StatusJson);
    else process.stdout.write(`unreachable: ${message}\n`);
    process.exit(STATUS_EXIT.unreachable);
  }
  if (options.json) printJson(asJson(status));
  else process.stdout.write(`${asText(status)}\n`);
  process.exit(status.frozen ? STATUS_EXIT.frozen : STATUS_EXIT.running);
}
