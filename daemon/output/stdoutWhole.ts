import { fstatSync, statSync } from 'node:fs';

/**
 * Writes all of `text` to stdout, resolving once the last byte is written: process.exit drops
 * what is still queued. Rejects if stdout is gone (EPIPE, a full disk): an answer the agent may
 * not have read in full is not an answer. A pipe nobody drains leaves the write waiting without
 * blocking the event loop, where the hook's own deadline runs (a synchronous write would hold
 * it, and the agent would kill the hook and run the tool). Rejects as well when stdout is
 * /dev/null, which is where Node points a stdout it was started without: written there, a deny
 * is exit 0 with no decision, and the agent runs the tool.
 */
export async function writeStdoutWhole(text: string): Promise<void> {
  const stdout = fstatSync(1);
  if (stdout.isCharacterDevice() && stdout.rdev === statSync('/dev/null').rdev)
    throw new Error('stdout is /dev/null: nobody would read the answer');
  await new Promise<void>((resolve, reject) => {
    process.stdout.once('error', reject);
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}
