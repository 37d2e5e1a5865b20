import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { CommandTree } from './commandTree.ts';
import { createCommandCgroup } from './commandCgroup.ts';
import { socketPath } from '../config/paths.ts';
import { RUN_MARKER, runMarker } from './findRunProcesses.ts';
import { groupTree } from './groupTree.ts';
import { procTree } from './procTree.ts';
import { readProcessStat } from './processStat.ts';

/** Two trees held as one: a cgroup, and what left it. */
function bothTrees(first: CommandTree, second: CommandTree): CommandTree {
  return {
    hold() {
      first.hold();
      second.hold();
    },
    release() {
      second.release();
      first.release();
    },
    signal(signal) {
      first.signal(signal);
      second.signal(signal);
    },
    alive: () => first.alive() || second.alive(),
    close() {
      first.close();
      second.close();
    },
  };
}

/**
 * Starts an allowed command with all it will start held as one (CommandTree): in a cgroup of its
 * own where Linux gives us one, else followed through /proc, else (macOS) as its process group.
 * `LATCH_EXEC_CGROUP=off` skips the cgroup, for a system whose cgroups another manager owns.
 */
export function startCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { child: ChildProcess; tree: CommandTree } {
  const marker = runMarker(socketPath(env));
  // Its own process group: a terminal's Ctrl-C reaches latch exec alone, which passes it on.
  const spawnCommand = () =>
    spawn(argv[0]!, argv.slice(1), {
      stdio: 'inherit',
      detached: true,
      env: { ...env, [RUN_MARKER]: marker },
    });

  const cgroup = env['LATCH_EXEC_CGROUP'] === 'off' ? undefined : createCommandCgroup();
  if (cgroup) {
    const child = cgroup.spawnInside(spawnCommand);
    // The command runs as this user, who may write the parent's cgroup.procs: a process that
    // moved itself out is followed by the run's marker, as without a cgroup.
    const escaped = procTree(undefined, marker, { spare: () => cgroup.members() });
    return { child, tree: bothTrees(cgroup, escaped) };
  }
  const child = spawnCommand();
  if (!existsSync('/proc/self/stat')) return { child, tree: groupTree(child) };
  // Read while the child cannot be reaped yet, so its pid is still its own.
  const start = child.pid === undefined ? undefined : readProcessStat(child.pid)?.start;
  return { child, tree: procTree(start === undefined ? undefined : { pid: child.pid!, start }, marker) };
}
