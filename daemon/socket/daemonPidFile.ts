import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { readProcessStat } from '../exec/processStat.ts';
import { InsecurePathError } from './securePath.ts';

/**
 * The running daemon's mark beside its socket (`daemon.sock` → `daemon.pid`, 0600 in the socket's
 * 0700 folder): one line, its pid and, on Linux, its start time (field 22 of /proc/<pid>/stat,
 * clock ticks since boot) and the boot's id (`/proc/sys/kernel/random/boot_id`): the file, in
 * `~/.latch/run` when there is no runtime folder, outlives a restart of the machine, after which
 * another process may have the same pid and start time. A daemon starting reads it to learn whether another still runs there,
 * which a connection cannot tell: a daemon stopped (SIGSTOP) or flooded does not accept, and
 * connecting to it fails as if nobody listened (EAGAIN, a full backlog). Node has no flock: the
 * bind of the socket itself is the step only one daemon can win (EADDRINUSE for the other), and
 * the file is written after it, whole (written aside, then renamed in place), so a reader never
 * sees half of it (docs/daemon.md, "The local socket").
 */
const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

/** This boot's id (Linux), or undefined where the kernel does not tell it. */
function bootId(): string | undefined {
  try {
    const id = readFileSync(BOOT_ID_FILE, 'utf8').trim();
    return /^[0-9a-f-]+$/i.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

export function pidFileOf(socketPath: string): string {
  return `${socketPath.replace(/\.sock$/, '')}.pid`;
}

/** Another daemon the pid file names that still runs: its pid, and not this process. */
export interface OtherDaemon {
  pid: number;
  /**
   * Known by its start time (Linux), or by the command its pid runs (`ps`, without /proc). When
   * neither can be read, only its pid is known alive, which after a restart of the machine may
   * be another process's: the socket then tells (docs/daemon.md).
   */
  sure: boolean;
}

/**
 * The daemon the pid file at `path` names, if it still runs: the same pid with the same start time
 * (Linux, not a zombie) in this boot, or on a system without /proc a pid that is alive, ours to signal, and
 * runs Latch. Undefined when there is no file, it names this process, or its process is gone (a
 * pid reused by another process since has another start time, or runs another program; a file
 * from another boot names no process of this one). A file written before the boot id was (pid
 * and start time only) is read by them alone. A file that is not a regular file is refused.
 */
export function otherDaemonOf(path: string): OtherDaemon | undefined {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) return undefined;
  if (!stat.isFile()) throw new InsecurePathError(`${path} is not a regular file; remove it`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const [pidWord = '', startWord = '', bootWord] = text.trim().split(/\s+/);
  const pid = Number(pidWord);
  if (!/^\d+$/.test(pidWord) || !Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid)
    return undefined;
  if (existsSync('/proc/self/stat')) {
    if (bootWord !== undefined && bootWord !== bootId()) return undefined;
    const stat = readProcessStat(pid);
    // A zombie (killed, not yet reaped by a parent that never reaps) keeps its start time.
    const running = stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
    return running && String(stat.start) === startWord ? { pid, sure: true } : undefined;
  }
  try {
    // Signal 0 only asks: ESRCH, gone; EPERM, another user's process, which no daemon of ours is.
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  // Without /proc (macOS), what the pid runs tells a daemon from a pid reused after a restart of
  // the machine: a connection cannot, since a full backlog there refuses as nobody listening does.
  const command = spawnSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8', timeout: 2000 });
  if (command.status !== 0 || command.error) return { pid, sure: false };
  return /\blatch\b/.test(command.stdout) ? { pid, sure: true } : undefined;
}

/** Marks this process as the daemon of the socket: the file written aside, then renamed in place. */
export function writePidFile(path: string): void {
  const aside = `${path}.${process.pid}.new`;
  rmSync(aside, { force: true });
  const start = readProcessStat(process.pid)?.start;
  const boot = start === undefined ? undefined : bootId();
  writeFileSync(aside, `${process.pid} ${start ?? ''}${boot === undefined ? '' : ` ${boot}`}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
  renameSync(aside, path);
}

/** Removes the pid file while it still names this process (never another daemon's). */
export function removeOwnPidFile(path: string): void {
  try {
    if (readFileSync(path, 'utf8').trim().split(/\s+/)[0] === String(process.pid)) unlinkSync(path);
  } catch {
    // Gone already, or unreadable: nothing of ours to remove.
  }
}
