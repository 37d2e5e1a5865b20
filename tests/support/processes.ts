import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cgroupDirectory } from '../../daemon/exec/cgroupDirectory.ts';
import { readProcessStat } from '../../daemon/exec/processStat.ts';

/** Live processes (zombies are not) whose argv is exactly `argv`: a test finds what it started by a unique argument. */
export function processesRunning(...argv: string[]): number[] {
  const wanted = `${argv.join('\0')}\0`;
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === wanted && readProcessStat(pid)?.state !== 'Z';
      } catch {
        return false;
      }
    });
}

/** This process's children, from every thread's list in /proc. */
export function ownChildren(): number[] {
  return readdirSync('/proc/self/task').flatMap((task) =>
    readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
}

/** Every live process below `pid`, by parent pid, each with its start time (pid reuse tells apart). */
export function descendantsOf(pid: number): Map<number, number> {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    const stat = readProcessStat(Number(name));
    if (stat && stat.state !== 'Z')
      children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(name)]);
  }
  const found = new Map<number, number>();
  for (
    let queue = [...(children.get(pid) ?? [])], next = queue.shift();
    next !== undefined;
    next = queue.shift()
  ) {
    const start = readProcessStat(next)?.start;
    if (start !== undefined) found.set(next, start);
    queue.push(...(children.get(next) ?? []));
  }
  return found;
}

/** Whether the process that started at `start` is still running (a zombie has ended). */
export function stillRunning(pid: number, start: number): boolean {
  const stat = readProcessStat(pid);
  return stat !== undefined && stat.start === start && stat.state !== 'Z';
}

/**
 * Whether a freeze holds the process: stopped by a signal (`T` in /proc/<pid>/stat), or in a
 * frozen cgroup, where cgroup.freeze leaves it sleeping (`S`) with `frozen 1` in cgroup.events.
 */
export function isHeld(pid: number): boolean {
  if (readProcessStat(pid)?.state === 'T') return true;
  const cgroup = cgroupDirectory(pid);
  try {
    return cgroup !== undefined && /^frozen 1$/m.test(readFileSync(join(cgroup, 'cgroup.events'), 'utf8'));
  } catch {
    return false;
  }
}

/** Ends processes for good: SIGKILL reaches stopped and frozen ones alike. */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** The cgroups `latch exec` made under this process's cgroup for one run (named by its pid). */
export function execCgroupsOf(execPid: number): string[] {
  const parent = cgroupDirectory(process.pid);
  if (!parent) return [];
  return readdirSync(parent).filter((name) => name.startsWith(`latch-exec-${execPid}-`));
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end with `input` on stdin; resolves once it has exited and its output is
 * all read ('close', not 'exit'). A command may exit without reading its input (a hook that
 * refuses it, a shell that finds no command): the broken pipe is then not an error.
 */
export function runToEnd(
  argv: string[],
  options: { input?: string | Buffer; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = argv;
    const child = spawn(command!, args, {
      env: options.env,
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${argv.join(' ')} did not finish:\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}
