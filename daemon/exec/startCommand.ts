import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { CommandTree } from './commandTree.ts';
import { createCommandCgroup } from './commandCgroup.ts';
import { RUN_MARKER } from './findRunProcesses.ts';
import { groupTree } from './groupTree.ts';
import { procTree } from './procTree.ts';
import { readProcessStat } from './processStat.ts';

/**
 * Starts an allowed command with all it will start held as one (CommandTree): in a cgroup of its
 * own where Linux gives us one, else followed through /proc, else (macOS) as its process group.
 * `LATCH_EXEC_CGROUP=off` skips the cgroup, for a system whose cgroups another manager owns.
 */
export function startCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { child: ChildProcess; tree: CommandTree } {
  const marker = randomBytes(16).toString('hex');
  // Its own process group: a terminal's Ctrl-C reaches latch exec alone, which passes it on.
  const spawnCommand = () =>
    spawn(argv[0]!, argv.slice(1), {
      stdio: 'inherit',
      detached: true,
      env: { ...env, [RUN_MARKER]: marker },
    });

  const cgroup = env['LATCH_EXEC_CGROUP'] === 'off' ? undefined : createCommandCgroup();
  if (cgroup) return { child: cgroup.spawnInside(spawnCommand), tree: cgroup };
  const child = spawnCommand();
  if (!existsSync('/proc/self/stat')) return { child, tree: groupTree(child) };
  // Read while the child cannot be reaped yet, so its pid is still its own.
  const start = child.pid === undefined ? undefined : readProcessStat(child.pid)?.start;
  return { child, tree: procTree(start === undefined ? undefined : { pid: child.pid!, start }, marker) };
}
