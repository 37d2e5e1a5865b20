import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';

/**
 * Reads one of Latch's own text files (config, policy, TOTP secret). Anything but a regular file
 * in its place is refused: a FIFO would hold a synchronous read, and with it the daemon's only
 * thread (relay frames, freezes, every caller), until someone writes to it. Opened without
 * blocking, so that opening a FIFO does not wait for a writer either. Other faults (a missing
 * file, no permission) throw as they are.
 */
export function readRegularFile(path: string): { ok: true; text: string } | { ok: false; message: string } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) return { ok: false, message: `${path} is not a regular file` };
    return { ok: true, text: readFileSync(fd, 'utf8') };
  } finally {
    closeSync(fd);
  }
}
