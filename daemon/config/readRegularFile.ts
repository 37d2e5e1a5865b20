import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';

/** The file is there, but is a FIFO, a device or a folder: nothing Latch wrote. */
export class NotRegularFileError extends Error {}

/**
 * Reads one of Latch's own text files (config, policy, TOTP secret). Anything but a regular file
 * in its place is refused: a FIFO would hold a synchronous read, and with it the daemon's only
 * thread (relay frames, freezes, every caller), until someone writes to it. Opened without
 * blocking, so that opening a FIFO does not wait for a writer either.
 */
export function readRegularFile(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new NotRegularFileError(`${path} is not a regular file`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
