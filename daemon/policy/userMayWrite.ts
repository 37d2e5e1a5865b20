import { accessSync, constants } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Whether the daemon's user may write a place: the place itself when it is there, or else the
 * nearest folder above it that is (where it would be made). Asked of the kernel (access W_OK),
 * which knows owners, modes, ACLs, root and read-only mounts.
 */
export function userMayWrite(path: string): boolean {
  for (let current = path; ; current = dirname(current)) {
    try {
      accessSync(current, constants.W_OK);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || current === '/') return false;
    }
  }
}
