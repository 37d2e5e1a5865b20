import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * A small file's text, read when the daemon starts (a shell's start-up file, git's config), or
 * nothing for what is no regular file (a FIFO would hold the daemon's start), is over
 * `mostBytes`, cannot be read, or is not there. Opened without waiting, then looked at.
 */
export function readSmallFile(path: string, mostBytes: number): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return '';
  }
  try {
    const stat = fstatSync(fd);
    const size = stat.size;
    if (!stat.isFile() || size > mostBytes) return '';
    const buffer = Buffer.alloc(size);
    const length = readSync(fd, buffer, 0, size, 0);
    return buffer.subarray(0, length).toString('utf8');
  } catch {
    return '';
  } finally {
    closeSync(fd);
  }
}
