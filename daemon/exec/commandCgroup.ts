import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { cgroupDirectory } from './cgroupDirectory.ts';
import type { CommandTree } from './commandTree.ts';

const PREFIX = 'latch-exec-';
/** How long close() waits for killed processes to leave the cgroup before removing it. */
const CLOSE_WAIT_MS = 2000;

export interface CommandCgroup extends CommandTree {
  /** The pids in the cgroup now (none once it is removed). */
  members(): ReadonlySet<number>;
  /**
   * Calls `spawnCommand` with this process inside the cgroup for the moment of the fork, so the
   * command is born in it: there is no moment in which it could fork outside. (Moving the child
   * in after spawn() returns would race its first fork: by then it has exec'd and runs.)
   */
  spawnInside(spawnCommand: () => ChildProcess): ChildProcess;
}

/**
 * A cgroup v2 of the command's own, under this process's cgroup, where that cgroup is ours to
 * write (systemd delegates the user's session; root may anyway). What the command starts is born
 * inside and cannot leave without write access to the parent, setsid or not, so a freeze is one
 * write to cgroup.freeze that stops the whole tree at once, a process forking at that moment too.
 * Undefined where there is none to be had: no cgroup v2, not ours, Linux before 5.2.
 */
export function createCommandCgroup(): CommandCgroup | undefined {
  const parent = cgroupDirectory();
  if (!parent) return undefined;
  try {
    accessSync(join(parent, 'cgroup.procs'), constants.W_OK);
  } catch {
    return undefined;
  }
  removeLeftCgroups(parent);
  const dir = join(parent, `${PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  const file = (name: string) => join(dir, name);
  const moveSelfTo = (cgroup: string) => writeFileSync(join(cgroup, 'cgroup.procs'), String(process.pid));
  try {
    mkdirSync(dir);
  } catch {
    return undefined;
  }
  try {
    if (!existsSync(file('cgroup.freeze'))) throw new Error('cgroup.freeze came with Linux 5.2');
    // A trial move in and out: a refusal (the parent's controllers, its owner) shows here, while
    // the /proc walk can still take over. Both moves need the same right, on the parent.
    moveSelfTo(dir);
    moveSelfTo(parent);
  } catch {
    removeQuietly(dir);
    return undefined;
  }

  const populated = () => /^populated 1$/m.test(readFileSync(file('cgroup.events'), 'utf8'));
  let closed = false;
  let frozen = false;
  const setFrozen = (value: boolean) => {
    writeFileSync(file('cgroup.freeze'), value ? '1' : '0');
    frozen = value;
  };
  const cgroup: CommandCgroup = {
    spawnInside(spawnCommand) {
      moveSelfTo(dir);
      try {
        return spawnCommand();
      } finally {
        moveSelfTo(parent);
      }
    },
    members() {
      try {
        return new Set(readFileSync(file('cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number));
      } catch {
        return new Set();
      }
    },
    hold: () => setFrozen(true),
    release: () => setFrozen(false),
    signal(signal) {
      // cgroup.kill (Linux 5.14) kills every member at once, frozen or forking.
      if (signal === 'SIGKILL' && existsSync(file('cgroup.kill')))
        return writeFileSync(file('cgroup.kill'), '1');
      // Frozen for the moment of sending, so that each process has its signal before any can act
      // on another's end: a shell whose child died first would otherwise exit 0, not by the signal.
      const pause = !frozen;
      if (pause) setFrozen(true);
      try {
        for (const pid of readFileSync(file('cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
          try {
            process.kill(Number(pid), signal);
          } catch {
            // it ended in between
          }
        }
      } finally {
        if (pause) setFrozen(false);
      }
    },
    alive: () => !closed && populated(),
    close() {
      if (closed) return;
      closed = true;
      try {
        waitSync(() => {
          if (!populated()) return true;
          cgroup.signal('SIGKILL');
          return false;
        }, CLOSE_WAIT_MS);
        rmdirSync(dir);
      } catch {
        // Still busy (a process stuck in the kernel): the next run removes it once it is empty.
      }
    },
  };
  return cgroup;
}

/** Cgroups of runs that were killed before they could remove theirs (SIGKILL), once empty. */
function removeLeftCgroups(parent: string): void {
  for (const name of readdirSync(parent)) {
    const owner = new RegExp(`^${PREFIX}(\\d+)-`).exec(name)?.[1];
    if (owner && !isRunning(Number(owner))) removeQuietly(join(parent, name));
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeQuietly(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // populated, or gone already
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Polls `done` every 10 ms, blocking, for up to `ms`: close() runs in 'exit' handlers. */
function waitSync(done: () => boolean, ms: number): void {
  const until = Date.now() + ms;
  while (!done() && Date.now() < until) Atomics.wait(pause, 0, 0, 10);
}
