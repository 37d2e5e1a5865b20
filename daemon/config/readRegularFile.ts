import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';

/**
 * Reads one of Latch's own text files (config, policy, a secret). Anything but a regular file in
 * its place is refused: a FIFO would hold a synchronous read, and with it the daemon's only thread
 * (relay frames, freezes, every caller), until someone writes to it. Opened without blocking, so
 * that opening a FIFO does not wait for a writer either. A secret is read with `followLinks: false`:
 * a link in its place (to a file of the user's that holds something else) is refused. Other faults
 * (a missing file, no permission) throw as they are.
 */
export function readRegularFile(
  path: string,
  { followLinks = true }: { followLinks?: boolean } = {},
): { ok: true; text: string } | { ok: false; message: string } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (followLinks ? 0 : constants.O_NOFOLLOW));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return { ok: false, message: `${path} is a link` };
    throw error;
  }
  try {
    if (!fstatSync(fd).isFile()) return { ok: false, message: `${path} is not a regular file` };
    return { ok: true, text: readFileSync(fd, 'utf8') };
  } finally {
    closeSync(fd);
  }
}
