import { readFileSync } from 'node:fs';
import { readProcessStat } from '../../daemon/exec/processStat.ts';

/**
 * Calls `then` once whoever launched this process is gone. npm 11 passes SIGINT and SIGTERM only
 * to its own child, which is `sh -c '<script>'`, not us; dash dies at once on SIGTERM and SIGHUP,
 * and npm itself dies on SIGHUP (it does not pass that one on). A signal sent to npm alone thus
 * leaves us running, re-parented: we watch our parent and, when it is npm's `sh -c`, npm too.
 * (A SIGINT to npm alone is held by dash until its child ends, which we cannot see.)
 */
export function onLauncherGone(then: () => void, everyMs = 250): void {
  const parent = process.ppid;
  const watched = [parent, ...(isNpmShell(parent) ? [readProcessStat(parent)?.ppid ?? 0] : [])]
    .filter((pid) => pid > 1)
    .map((pid) => ({ pid, start: readProcessStat(pid)?.start }));
  const timer = setInterval(() => {
    // Re-parented (to init or a subreaper): the parent has ended. Else each by its start time,
    // where /proc tells it (not on macOS, where only the re-parenting shows).
    const gone =
      process.ppid !== parent ||
      watched.some(({ pid, start }) => start !== undefined && readProcessStat(pid)?.start !== start);
    if (!gone) return;
    clearInterval(timer);
    then();
  }, everyMs);
  timer.unref();
}

/** Whether `pid` is the shell npm runs our script in: `sh -c "$npm_lifecycle_script"`. */
function isNpmShell(pid: number): boolean {
  const script = process.env['npm_lifecycle_script'];
  if (!script) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(1, 3).join(' ') === `-c ${script}`;
  } catch {
    return false;
  }
}
