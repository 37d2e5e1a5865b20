import { closeSync, constants, fchmodSync, fstatSync, openSync } from 'node:fs';

/**
 * Files that hold keys, tokens or the audit trail are the user's alone. A wider mode is tightened
 * at start, with a line saying so (design.md, "Hard rules"). Only a regular file, opened without
 * following a link: whatever else stands at a path (a link to a folder, a FIFO) is left as it is,
 * for the check that reads the file to refuse.
 */
export function tightenToOwnerOnly(paths: readonly string[], log: (line: string) => void): void {
  for (const path of paths) {
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      continue; // missing, a link, or unreadable: not a file to tighten
    }
    try {
      const stat = fstatSync(fd);
      const mode = stat.mode & 0o777;
      if (stat.isFile() && (mode & 0o077) !== 0) {
        fchmodSync(fd, 0o600);
        log(`tightened ${path} from ${mode.toString(8).padStart(4, '0')} to 0600`);
      }
    } finally {
      closeSync(fd);
    }
  }
}
