import { fstatSync, statSync, writeSync } from 'node:fs';

const oneMillisecond = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes all of `text` to stdout before returning, waiting out a full pipe. Throws if stdout is
 * gone (EPIPE, a full disk): an answer the agent may not have read in full is not an answer.
 * (process.stdout on a pipe writes asynchronously, and process.exit drops what is still queued.)
 * Throws as well when stdout is /dev/null, which is where Node points a stdout it was started
 * without: written there, a deny is exit 0 with no decision, and the agent runs the tool.
 */
export function writeStdoutWhole(text: string): void {
  const stdout = fstatSync(1);
  if (stdout.isCharacterDevice() && stdout.rdev === statSync('/dev/null').rdev)
    throw new Error('stdout is /dev/null: nobody would read the answer');
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(oneMillisecond, 0, 0, 1); // a reader slower than us: let it drain the pipe
    }
  }
}
