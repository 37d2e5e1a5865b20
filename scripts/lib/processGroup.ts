import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { endCommandTree } from '../../daemon/exec/endCommandTree.ts';
import { groupTree } from '../../daemon/exec/groupTree.ts';

/**
 * How long a group has to end on SIGTERM before it gets SIGKILL. wrangler and the daemon end well
 * within it; workerd ignores SIGTERM and is only ever stopped by the SIGKILL.
 */
const GRACE_MS = 3000;
/**
 * After SIGKILL, what remains is the kernel tearing processes down and their parents reaping them.
 * A zombie whose parent never reaps it would keep its group "alive" forever: past this, stop
 * returns anyway, since a zombie holds no port, socket or file.
 */
const REAP_MS = 5000;

/** A process started in a process group of its own, with all that it starts in turn. */
export interface ProcessGroup {
  child: ChildProcess;
  /**
   * SIGTERM to the whole group, SIGKILL to what is left after a grace, and back once the group is
   * empty. Safe to call again, and once the group has ended on its own.
   */
  stop(): Promise<void>;
}

// Every group this process started and has not stopped yet: killed as this process exits, so
// that a crash or a stray process.exit leaves nothing behind (a SIGKILL of ourselves still does).
const running = new Set<ProcessGroup>();
let exitHook = false;

/**
 * Spawns `command` as the leader of a new process group (`detached`), so that one signal reaches
 * it and everything it starts (wrangler's workerd), and a terminal's Ctrl-C reaches it only
 * through us. The group is stopped by daemon/exec's groupTree and endCommandTree, the same steps
 * `latch exec` takes where it has no /proc.
 */
export function startProcessGroup(
  command: string,
  args: readonly string[],
  options: Omit<SpawnOptions, 'detached'>,
): ProcessGroup {
  const child = spawn(command, args, { ...options, detached: true });
  const tree = groupTree(child);
  let stopping: Promise<void> | undefined;
  const group: ProcessGroup = {
    child,
    stop: () =>
      (stopping ??= (async () => {
        await endCommandTree(tree, { held: false, graceMs: GRACE_MS });
        for (const until = Date.now() + REAP_MS; tree.alive() && Date.now() < until;) await sleep(20);
        running.delete(group);
      })()),
  };
  running.add(group);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const left of running) groupTree(left.child).close();
    });
  }
  return group;
}
