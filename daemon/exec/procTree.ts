import type { CommandTree } from './commandTree.ts';
import { findRunProcesses, type MarkerOptions, type Members } from './findRunProcesses.ts';
import { signalProcess } from './signalProcess.ts';

/**
 * A pass finds what forked while the one before was signalling its parent; a stopped process
 * forks no more, so a few passes find everything. The cap bounds a fork bomb's share of our time.
 */
const MAX_PASSES = 20;

/**
 * The run followed through /proc, where no cgroup is ours to make: by parent pid and by the
 * run's marker (findRunProcesses), every signal checked against the process's start time.
 */
export function procTree(
  root: { pid: number; start: number } | undefined,
  marker: string | { daemon: string },
  options: MarkerOptions = {},
): CommandTree {
  let members: Members = new Map();
  const stopped: Members = new Map();
  const refresh = () => (members = findRunProcesses(root, marker, members, options));
  // Pass after pass, until a pass finds no process it has not signalled yet.
  const signalAll = (signal: NodeJS.Signals, signalled: Members = new Map()) => {
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const fresh = [...refresh()].filter(([pid, start]) => signalled.get(pid) !== start);
      if (fresh.length === 0) return;
      for (const [pid, start] of fresh) {
        signalProcess(pid, start, signal);
        signalled.set(pid, start);
      }
    }
  };
  const continueAll = (which: Members) => {
    for (const [pid, start] of which) signalProcess(pid, start, 'SIGCONT');
    which.clear();
  };
  return {
    // Every process of the run, each time: one that another process continued is stopped again.
    hold() {
      const now: Members = new Map();
      signalAll('SIGSTOP', now);
      for (const [pid, start] of now) stopped.set(pid, start);
    },
    release: () => continueAll(stopped),
    signal(signal) {
      if (stopped.size > 0 || signal === 'SIGKILL') return signalAll(signal);
      // Stopped for the moment of sending, so that each process has its signal before any can act
      // on another's end: a shell whose child died first would otherwise exit 0, not by the signal.
      const paused: Members = new Map();
      signalAll('SIGSTOP', paused);
      signalAll(signal);
      continueAll(paused);
    },
    alive: () => refresh().size > 0,
    close: () => signalAll('SIGKILL'),
  };
}
