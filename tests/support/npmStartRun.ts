/** `npm start` as a person runs it, in a state folder and on a port of its own, found again in /proc. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { readProcessStat } from '../../daemon/exec/processStat.ts';
import { freePort } from '../../scripts/lib/relayProcess.ts';
import { killAll } from './processes.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
export const LATCH = join(ROOT, 'daemon/bin/latch.cjs');
const cleanups: (() => Promise<void> | void)[] = [];

/** Runs `cleanup` after this test, before what was registered earlier. */
export const afterThisTest = (cleanup: () => Promise<void> | void) => void cleanups.push(cleanup);

/** Undoes what the test started, last first: for each test file's afterEach. */
export async function cleanUpRuns(): Promise<void> {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups.length = 0;
}

/** One `npm start`: its state directory and its relay's port, which tie its processes to it. */
export interface Run {
  state: string;
  port: number;
}

export async function newRun(): Promise<Run> {
  const state = mkdtempSync(join(tmpdir(), 'latch-start-'));
  const run = { state, port: await freePort() };
  // Whatever happens in the test, nothing of this run outlives it.
  afterThisTest(async () => {
    killAll(processesOf(run).map(({ pid }) => pid));
    // Gone before the files go: a wrangler still writing there would make the removal fail.
    for (let tries = 0; processesOf(run).length > 0 && tries < 100; tries++) await sleep(50);
    rmSync(state, { recursive: true, force: true });
  });
  return run;
}

/**
 * Every live process of a run, found in /proc: it carries the run's LATCH_START_STATE in its
 * environment (all that npm start starts inherits it: npm, sh, start.ts, wrangler, workerd, the
 * daemon, latch pair, the pipe's reader), or names the run's state or port on its command line.
 */
export function processesOf(run: Run): { pid: number; command: string }[] {
  const onPort = new RegExp(`127\\.0\\.0\\.1:${run.port}(?!\\d)`);
  const found: { pid: number; command: string }[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!/^\d+$/.test(name) || pid === process.pid) continue;
    try {
      if (readProcessStat(pid)?.state === 'Z') continue;
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      const command = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
      if (
        environ.includes(`LATCH_START_STATE=${run.state}`) ||
        command.includes(run.state) ||
        onPort.test(command)
      )
        found.push({ pid, command });
    } catch {
      // ended while we looked
    }
  }
  return found;
}

/** What each process of a run is, by the part of its command line that tells. */
function kindsOf(run: Run): string[] {
  const kinds: [RegExp, string][] = [
    [/workerd serve/, 'workerd'],
    [/wrangler.* dev /, 'wrangler'],
    [/latch\.cjs daemon$/, 'latch daemon'],
    [/latch\.cjs pair$/, 'latch pair'],
    [/scripts\/start\.ts$/, 'start.ts'],
  ];
  const found = processesOf(run).map(({ command }) => kinds.find(([pattern]) => pattern.test(command))?.[1]);
  return [...new Set(found.filter((kind) => kind !== undefined))].sort();
}

const ALL_PARTS = ['latch daemon', 'latch pair', 'start.ts', 'workerd', 'wrangler'];

/** The environment one run of `npm start` sees: its own state folder and port. */
const runEnv = (run: Run): NodeJS.ProcessEnv => ({
  ...process.env,
  LATCH_START_STATE: run.state,
  LATCH_PORT: String(run.port),
  WRANGLER_SEND_METRICS: 'false',
});

/** Launches `npm start` through `sh -c command`, as the leader of a process group, as a shell would a job. */
export function launch(
  run: Run,
  command: string,
): { job: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const job = spawn('sh', ['-c', command], {
    cwd: ROOT,
    env: runEnv(run),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  job.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  job.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => job.once('exit', (code) => resolve(code)));
  afterThisTest(() => signalGroup(job, 'SIGKILL'));
  return { job, output: () => output, exited };
}

export function signalGroup(job: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-job.pid!, signal);
  } catch {
    // already gone, as it should be
  }
}

/** Until the run is up: the relay, the daemon and latch pair all running. */
export async function untilRunning(run: Run, output: () => string): Promise<void> {
  await expect.poll(() => output(), { timeout: 90_000, interval: 500 }).toContain('Latch is running.');
  await expect.poll(() => kindsOf(run), { timeout: 30_000, interval: 200 }).toEqual(ALL_PARTS);
}

export async function untilNoneLeft(run: Run): Promise<void> {
  await expect.poll(() => processesOf(run), { timeout: 30_000, interval: 200 }).toEqual([]);
  expect(await portIsClosed(run.port)).toBe(true);
  expect(existsSync(join(run.state, 'start.pid'))).toBe(false);
}

export const portIsClosed = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

/** `npm start` run to its end, as a person would type it next to another. */
export async function startToEnd(run: Run): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const started = spawn('npm', ['start'], {
    cwd: ROOT,
    env: runEnv(run),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  afterThisTest(() => signalGroup(started, 'SIGKILL'));
  let stdout = '';
  let stderr = '';
  started.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  started.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => started.once('exit', (exit) => resolve(exit)));
  return { code, stdout, stderr };
}
