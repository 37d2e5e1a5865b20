import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The cgroup v2 directory of a process: its `0::<path>` line in /proc/<pid>/cgroup, under where
 * the cgroup2 file system is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid
 * v1 + v2 system). Undefined without /proc (macOS) or without cgroup v2.
 */
export function cgroupDirectory(pid: number | 'self' = 'self'): string | undefined {
  let path: string | undefined;
  let mount: string[] | undefined;
  try {
    path = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .find((line) => line.startsWith('0::'))
      ?.slice(3);
    // proc(5) mountinfo: field 4 is the mount's root within the file system, field 5 where it is
    // mounted; the file system type follows the " - " separator.
    mount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .find((fields) => fields[fields.indexOf('-') + 1] === 'cgroup2');
  } catch {
    return undefined;
  }
  const [root, point] = [mount?.[3], mount?.[4]];
  if (path === undefined || root === undefined || point === undefined) return undefined;
  if (root === '/') return join(point, path);
  // A mount of part of the hierarchy shows only what is below its root.
  return path === root || path.startsWith(`${root}/`) ? join(point, path.slice(root.length)) : undefined;
}
