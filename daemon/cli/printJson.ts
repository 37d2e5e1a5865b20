import { writeSync } from 'node:fs';

/**
 * Prints a command's `--json` answer (docs/daemon.md#for-scripts): one object on one line of
 * stdout, written synchronously, so that it is out before the exit code that goes with it, even
 * from an 'exit' handler.
 */
export function printJson(value: object): void {
  writeSync(1, `${JSON.stringify(value)}\n`);
}
