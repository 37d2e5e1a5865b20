import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { readProcessStat } from '../../daemon/exec/processStat.ts';
import { freePort } from '../../scripts/lib/relayProcess.ts';
import { launchPhone } from '../support/browserPhone.ts';
import { openPending } from '../support/browserFlows.ts';
import { killAll } from '../support/processes.ts';
import { startPushService } from '../support/pushService.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const LATCH = join(ROOT, 'daemon/bin/latch.cjs');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups.length = 0;
});

/** One `npm start`: its state directory and its relay's port, which tie its processes to it. */
interface Run {
  state: string;
  port: number;
}

async function newRun(): Promise<Run> {
  const state = mkdtempSync(join(tmpdir(), 'latch-start-'));
  const run = { state, port: await freePort() };
  // Whatever happens in the test, nothing of this run outlives it.
  cleanups.push(async () => {
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
function processesOf(run: Run): { pid: number; command: string }[] {
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
function launch(
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
  cleanups.push(() => signalGroup(job, 'SIGKILL'));
  return { job, output: () => output, exited };
}

function signalGroup(job: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-job.pid!, signal);
  } catch {
    // already gone, as it should be
  }
}

/** Until the run is up: the relay, the daemon and latch pair all running. */
async function untilRunning(run: Run, output: () => string): Promise<void> {
  await expect.poll(() => output(), { timeout: 90_000, interval: 500 }).toContain('Latch is running.');
  await expect.poll(() => kindsOf(run), { timeout: 30_000, interval: 200 }).toEqual(ALL_PARTS);
}

async function untilNoneLeft(run: Run): Promise<void> {
  await expect.poll(() => processesOf(run), { timeout: 30_000, interval: 200 }).toEqual([]);
  expect(await portIsClosed(run.port)).toBe(true);
  expect(existsSync(join(run.state, 'start.pid'))).toBe(false);
}

const portIsClosed = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

/** `npm start` run to its end, as a person would type it next to another. */
async function startToEnd(run: Run): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const started = spawn('npm', ['start'], {
    cwd: ROOT,
    env: runEnv(run),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  cleanups.push(() => signalGroup(started, 'SIGKILL'));
  let stdout = '';
  let stderr = '';
  started.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  started.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => started.once('exit', (exit) => resolve(exit)));
  return { code, stdout, stderr };
}

describe('npm start', () => {
  it('runs relay, app and daemon, shows latch pair’s code, takes a phone and a request, and stops cleanly on Ctrl-C', async () => {
    const run = await newRun();
    const { job: started, output } = launch(run, 'exec npm start');
    await untilRunning(run, output);
    await expect
      .poll(() => /Waiting for your phone/.test(output()), { timeout: 30_000, interval: 500 })
      .toBe(true);
    const origin = `http://localhost:${run.port}`;
    expect(output()).toContain(`the phone app:  ${origin}`);
    expect(output()).toContain('▀'); // latch pair's QR code
    expect(existsSync(join(run.state, 'relay.env'))).toBe(true);

    // A person opens the printed link in a browser and pairs it.
    const link = /^(http\S+\/pair#\S+)$/m.exec(output())![1]!;
    const push = await startPushService();
    cleanups.push(() => push.close());
    const phone = await launchPhone(
      origin,
      (await new PushServiceClient(push.url).subscribe()).subscription,
      'start',
    );
    cleanups.push(() => phone.close());
    await phone.page.goto(link);
    await phone.page.getByRole('button', { name: 'Pair with Face ID' }).click();
    await phone.page.getByText(/^Paired with /).waitFor({ timeout: 30_000 });

    // Then asks, as the docs show, and approves on the "phone".
    const demo = { ...process.env, LATCH_HOME: join(run.state, 'home'), XDG_RUNTIME_DIR: '' };
    const request = spawn(
      process.execPath,
      [LATCH, 'request', '--title', 'Deploy the site', '--risk', 'low'],
      { env: demo, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let said = '';
    request.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
    await openPending(phone, origin, /Deploy the site/);
    await phone.page.getByRole('button', { name: 'Approve with Face ID' }).click();
    const code = await new Promise((resolve) => request.once('exit', resolve));
    expect({ code, said }).toEqual({ code: 0, said: 'approved: approved on Browser\n' });

    // Ctrl-C: SIGINT to the terminal's foreground process group. Everything it started is gone:
    // wrangler, workerd, the daemon (and its socket), the relay's port.
    signalGroup(started, 'SIGINT');
    await untilNoneLeft(run);
    expect(existsSync(join(run.state, 'home', 'run', 'daemon.sock'))).toBe(false);
  });

  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)(
    'stops every process it started on %s to its process group behind a pipe, though the pipe’s reader ends first',
    async (signal) => {
      const run = await newRun();
      // `npm start | cat`: the terminal's Ctrl-C (or its hang-up) reaches cat too, which ends at
      // once; start.ts's "stopping…" then meets a closed pipe (EPIPE).
      const { job, output } = launch(run, 'npm start 2>&1 | cat');
      await untilRunning(run, output);

      signalGroup(job, signal);
      await untilNoneLeft(run);
    },
  );

  it.each(['SIGTERM', 'SIGHUP'] as const)(
    'stops every process it started when npm alone gets %s',
    async (signal) => {
      const run = await newRun();
      const { output } = launch(run, 'npm start | cat');
      await untilRunning(run, output);
      // npm passes SIGTERM to its `sh -c` (which dies at once) and dies on SIGHUP: either way the
      // start script never sees the signal, only that what launched it is gone.
      const npm = processesOf(run).find(({ command }) => command === 'npm start');
      expect(npm).toBeDefined();
      process.kill(npm!.pid, signal);
      await untilNoneLeft(run);
    },
  );

  it('stops the relay it started when it fails part-way', async () => {
    const run = await newRun();
    // A file where the demo host's home would go: latch init fails, after the relay started.
    writeFileSync(join(run.state, 'home'), '');
    const ended = await startToEnd(run);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toMatch(/^npm start: latch init failed/m);
    expect(existsSync(join(run.state, 'relay'))).toBe(true);
    await untilNoneLeft(run);
  });

  it('refuses a second npm start next to a running one, in one line, and starts nothing', async () => {
    const run = await newRun();
    const { job, output } = launch(run, 'npm start | cat');
    await untilRunning(run, output);
    const before = processesOf(run);

    const second = await startToEnd(run);
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^npm start: npm start is already running for \S+ \(pid \d+\); stop it with Ctrl-C/,
      ),
    ]);
    expect(second.stdout).not.toContain('Latch is running');
    expect(processesOf(run)).toEqual(before);
    expect(output()).not.toMatch(/Latch is running[^]*Latch is running/);

    signalGroup(job, 'SIGINT');
    await untilNoneLeft(run);
  });

  it('refuses to run beside a latch daemon it did not start, and stops the relay it had started', async () => {
    const run = await newRun();
    // The demo host, set up, and its daemon started by hand; LATCH_START_STATE lets the test find it.
    const demo = {
      ...process.env,
      LATCH_HOME: join(run.state, 'home'),
      XDG_RUNTIME_DIR: '',
      LATCH_START_STATE: run.state,
    };
    const init = spawnSync(
      process.execPath,
      [LATCH, 'init', '--relay', `http://localhost:${run.port}`, '--quorum', '1'],
      {
        env: demo,
        encoding: 'utf8',
      },
    );
    expect(init.status).toBe(0);
    const foreign = spawn(process.execPath, [LATCH, 'daemon'], { env: demo, stdio: 'ignore' });
    cleanups.push(() => void foreign.kill('SIGKILL'));
    await expect
      .poll(() => spawnSync(process.execPath, [LATCH, 'status'], { env: demo }).status, { timeout: 30_000 })
      .toBe(0);

    const ended = await startToEnd(run);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toMatch(
      /^npm start: a latch daemon that this did not start already serves \S+; stop it/m,
    );
    expect(ended.stdout).not.toContain('Latch is running');
    // Its relay is gone; the daemon it did not start runs on, untouched.
    expect(processesOf(run).map(({ pid }) => pid)).toEqual([foreign.pid]);
    expect(await portIsClosed(run.port)).toBe(true);
  });

  it('refuses a port another process listens on, naming the port, and starts nothing', async () => {
    const run = await newRun();
    const foreign = createServer();
    await new Promise<void>((resolve) => foreign.listen(run.port, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => foreign.close(() => resolve())));

    const ended = await startToEnd(run);
    expect(ended.code).toBe(1);
    expect(ended.stderr.trim().split('\n')).toEqual([
      `npm start: port ${run.port} is in use by another process; stop it, or use another port: LATCH_PORT=${run.port + 3} npm start`,
    ]);
    expect(existsSync(join(run.state, 'relay'))).toBe(false);
    expect(processesOf(run)).toEqual([]);
  });
});
