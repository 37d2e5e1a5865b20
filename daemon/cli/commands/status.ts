import { callDaemon } from '../../socket/daemonClient.ts';
import type { DaemonStatus } from '../../socket/localApi.ts';

/** Exit codes of `latch status`: they compose in a shell check. */
export const STATUS_EXIT = { running: 0, frozen: 1, unreachable: 2 } as const;

export async function run(): Promise<void> {
  try {
    const status = await callDaemon<DaemonStatus>('GET', '/v1/status', undefined, { timeoutMs: 5000 });
    const relay = `relay ${status.relay}, ${status.devices} phone${status.devices === 1 ? '' : 's'}, quorum ${status.quorum}`;
    if (status.frozen) {
      process.stdout.write(
        `frozen: ${status.reason ?? 'no reason given'} (epoch ${status.epoch}; ${relay})\n`,
      );
      process.exit(STATUS_EXIT.frozen);
    }
    const pending = (['policy', 'config'] as const)
      .filter((file) => status[file] !== 'ok')
      .map((file) => `, ${file} ${status[file].replace('_', ' ')}`)
      .join('');
    process.stdout.write(`running: armed (${relay}, ${status.pending} waiting${pending})\n`);
    process.exit(STATUS_EXIT.running);
  } catch (error) {
    process.stdout.write(`unreachable: ${(error as Error).message}\n`);
    process.exit(STATUS_EXIT.unreachable);
  }
}
