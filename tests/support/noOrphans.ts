import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandTree } from '../../daemon/exec/commandTree.ts';
import { endCommandTree } from '../../daemon/exec/endCommandTree.ts';
import { findRunProcesses } from '../../daemon/exec/findRunProcesses.ts';
import { procTree } from '../../daemon/exec/procTree.ts';
import { readProcessStat } from '../../daemon/exec/processStat.ts';
import { ownChildren } from './processes.ts';

/**
 * The environment variable that names one vitest run in every process it starts. Set here, before
 * vitest forks its workers, it is inherited by each worker and by all they spawn (relay, workerd,
 * daemon, `latch exec` and its command, Chromium), whatever group, session or parent they end up
 * in: /proc/<pid>/environ keeps it for the process's life. A file registry would need every spawn
 * to record itself; the marker needs nothing from the tests, and a nested run gets its own.
 */
export const TEST_RUN = 'LATCH_TEST_RUN';

/** workerd ignores SIGTERM; the daemon and wrangler end well within this. */
const GRACE_MS = 3000;
/** After SIGKILL, the kernel tears the processes down: past this, what is left is a zombie. */
const REAP_MS = 5000;

/**
 * Global setup: marks the run, and gives it a temporary folder of its own (`TMPDIR`, which every
 * `mkdtemp` under `os.tmpdir()` and every process the run starts inherit, as the marker is).
 * Its teardown, once every test file has ended (passed, failed, or its worker killed), ends
 * whatever the run left running, then removes that folder: the homes, databases and browser
 * profiles of hundreds of tests, which no test has to remember to remove.
 */
export default function markTestRun(): () => Promise<void> {
  const run = randomBytes(12).toString('hex');
  process.env[TEST_RUN] = run;
  const temporary = mkdtempSync(join(tmpdir(), 'latch-test-run-'));
  process.env['TMPDIR'] = temporary;
  return async () => {
    await endTestRun(run);
    rmSync(temporary, { recursive: true, force: true });
  };
}

/**
 * Ends every process that carries the run's marker, with all they started (by parent pid) and
 * every process group they lead or share (a detached spawn: wrangler and its workerd), SIGTERM
 * first and SIGKILL after a grace. Names what it had to stop: each is a test that leaked.
 */
export async function endTestRun(run: string): Promise<void> {
  // vitest's workers carry the mark (forked after it was set) and are vitest's to end.
  const marking = { variable: TEST_RUN, spare: new Set(ownChildren()) };
  const marked = [...findRunProcesses(undefined, run, new Map(), marking).keys()];
  if (marked.length === 0) return;
  process.stderr.write(
    `no orphans: stopping what this run left running:\n${marked.map(described).join('\n')}\n`,
  );
  const ownGroup = readProcessStat(process.pid)?.pgid;
  const groups = new Set(
    marked
      .map((pid) => readProcessStat(pid)?.pgid)
      .filter((pgid): pgid is number => pgid !== undefined && pgid !== ownGroup),
  );
  const everything = runAndItsGroups(procTree(undefined, run, marking), [...groups]);
  await endCommandTree(everything, { held: false, graceMs: GRACE_MS });
  for (const until = Date.now() + REAP_MS; everything.alive() && Date.now() < until;) await sleep(20);
}

/** The marked tree and the process groups its members were in, signalled as one. */
function runAndItsGroups(marked: CommandTree, groups: number[]): CommandTree {
  const signalGroups = (signal: NodeJS.Signals | 0) =>
    groups.filter((pgid) => {
      try {
        process.kill(-pgid, signal);
        return true;
      } catch {
        // ESRCH: the group is empty
        return false;
      }
    }).length > 0;
  const signal = (name: NodeJS.Signals) => {
    marked.signal(name);
    signalGroups(name);
  };
  return {
    hold: () => signal('SIGSTOP'),
    release: () => signal('SIGCONT'),
    signal,
    // Both asked each time: `||` would skip the groups while the tree is alive.
    alive: () => [marked.alive(), signalGroups(0)].includes(true),
    close: () => signal('SIGKILL'),
  };
}

function described(pid: number): string {
  try {
    return `  ${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 160)}`;
  } catch {
    return `  ${pid} (gone)`;
  }
}
