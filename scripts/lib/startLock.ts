import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { readProcessStat } from '../../daemon/exec/processStat.ts';

/** This process now holds the lock, or another live one does. */
export type StartLock = { taken: true; release(): void } | { taken: false; holder: number };

/**
 * Takes the lock file at `path` for this process: created only where none exists (O_EXCL), it
 * holds our pid and the time our process started. A lock whose holder is gone (a crash, a SIGKILL)
 * is stale and is taken over; the start time, checked against /proc, keeps a pid that another
 * process took since from passing for the holder. Without /proc (macOS) a live pid is the holder.
 */
export function takeStartLock(path: string): StartLock {
  const mine = identity(process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, mine, { flag: 'wx', mode: 0o600 });
      return { taken: true, release: () => removeIfStill(path, mine) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = readIfThere(path);
    if (held === undefined) continue; // released in between: try again
    const [pid, start] = held.trim().split(' ').map(Number) as [number, number | undefined];
    if (holds(pid, start)) return { taken: false, holder: pid };
    // Stale. Another start may be taking it over too: remove it only while it is the one we read.
    removeIfStill(path, held);
  }
  throw new Error(`could not take the lock ${path}: other starts keep taking it`);
}

function identity(pid: number): string {
  const start = readProcessStat(pid)?.start;
  return start === undefined ? `${pid}\n` : `${pid} ${start}\n`;
}

function holds(pid: number, start: number | undefined): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (start !== undefined && !Number.isNaN(start)) return readProcessStat(pid)?.start === start;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readIfThere(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function removeIfStill(path: string, content: string): void {
  try {
    if (readFileSync(path, 'utf8') === content) unlinkSync(path);
  } catch {
    // gone already
  }
}
