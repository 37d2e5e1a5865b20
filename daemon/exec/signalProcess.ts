import { readProcessStat } from './processStat.ts';

/**
 * Sends a signal to one process, if it is still the one that started at `start` (a pid freed and
 * taken by another process is left alone). False when it is gone or out of reach.
 */
export function signalProcess(pid: number, start: number, signal: NodeJS.Signals): boolean {
  if (readProcessStat(pid)?.start !== start) return false;
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    // ESRCH: it ended in between; EPERM: it became another user's (setuid), which we cannot stop
    return false;
  }
}
