import { setTimeout as sleep } from 'node:timers/promises';
import { ownChildren } from '../tests/support/processes.ts';

const SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const;
/** How long the ordinary clean-up may take before what is left is killed. */
const GRACE_MS = 5000;

/**
 * A benchmark ended by a signal (Ctrl-C, or a kill of this process alone, which its children do
 * not see) stops what it started, as an error does: `stop` first, then SIGKILL to any child still
 * running (a daemon a benchmark started for itself), then exit, where processGroup.ts kills the
 * relay's whole group (workerd ignores SIGTERM).
 */
export function stopOnSignal(stop: () => Promise<void>): void {
  for (const [signal, number] of Object.entries(SIGNALS)) {
    process.once(signal, () => {
      process.stderr.write(`bench: ${signal}, stopping what the run started\n`);
      void Promise.race([stop().catch(() => {}), sleep(GRACE_MS)]).finally(() => {
        for (const pid of ownChildren()) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        process.exit(128 + number);
      });
    });
  }
}
