import type { ChildProcess } from 'node:child_process';
import type { CommandTree } from './commandTree.ts';

/**
 * Where there is neither cgroup nor /proc (macOS): the command's process group. A child that
 * calls setsid, or double-forks into a session of its own, leaves it and is out of reach.
 */
export function groupTree(child: ChildProcess): CommandTree {
  const signalGroup = (signal: NodeJS.Signals | 0): boolean => {
    if (child.pid === undefined) return false;
    try {
      process.kill(-child.pid, signal);
      return true;
    } catch {
      // ESRCH: the group is empty
      return false;
    }
  };
  return {
    hold: () => void signalGroup('SIGSTOP'),
    release: () => void signalGroup('SIGCONT'),
    signal: (signal) => void signalGroup(signal),
    alive: () => signalGroup(0),
    close: () => void signalGroup('SIGKILL'),
  };
}
