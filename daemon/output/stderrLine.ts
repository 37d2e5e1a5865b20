import { writeSync } from 'node:fs';

/** Writes a line to stderr synchronously: safe in an 'exit' handler, where streams may not flush. */
export function writeStderrLine(line: string): void {
  try {
    writeSync(2, `${line}\n`);
  } catch {
    // stderr is gone: the exit code still says no
  }
}
