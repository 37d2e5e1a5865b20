import { readFileSync } from 'node:fs';
import { realPath } from '../policy/realPath.ts';

/**
 * File systems a process serves (FUSE: sshfs, rclone, a script of the agent's own): a look into
 * one waits on that process, which may never answer, and blocks the thread that looks.
 */
const SERVED = /^fuse(blk|\..+)?$/;

/** Where such file systems are mounted, from this process's mount table (none without /proc). */
function servedMounts(): { mountPoint: string; type: string }[] {
  let table: string;
  try {
    table = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  return table.split('\n').flatMap((line) => {
    // `id parent dev root mount-point options [tags…] - type source super-options`
    const fields = line.split(' ');
    const type = fields[fields.indexOf('-') + 1] ?? '';
    if (!SERVED.test(type)) return [];
    const mountPoint = fields[4]!.replace(/\\([0-7]{3})/g, (_, octal: string) =>
      String.fromCharCode(parseInt(octal, 8)),
    );
    return [{ mountPoint, type }];
  });
}

/** Thrown by the walk where its next look would go into a served file system. */
class ServedLook extends Error {
  readonly type: string;
  constructor(type: string) {
    super(type);
    this.type = type;
  }
}

/**
 * The type of the served file system that a path, or a link on its way, leads into (`proc` for
 * one through /proc), or undefined. The walk looks at each name before the next (realPath) and
 * stops before one inside such a mount, so nothing here waits on its process: the hook's own
 * deadline runs on this thread, and an agent that stalls a look past it would have its tool run.
 */
export function servedFileSystem(path: string): string | undefined {
  const mounts = servedMounts();
  const servedType = (look: string) =>
    // A process's `root`, `cwd` and open files under /proc lead into its mount namespace, where
    // a mount this table does not list may be: nothing there is worth a diff anyway.
    look === '/proc' || look.startsWith('/proc/')
      ? 'proc'
      : mounts.find(({ mountPoint }) => look === mountPoint || look.startsWith(`${mountPoint}/`))?.type;
  try {
    return servedType(
      realPath(path, {
        beforeLook: (look) => {
          const type = servedType(look);
          if (type !== undefined) throw new ServedLook(type);
        },
      }),
    );
  } catch (error) {
    if (error instanceof ServedLook) return error.type;
    throw error;
  }
}
