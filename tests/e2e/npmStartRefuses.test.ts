import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  afterThisTest,
  cleanUpRuns,
  LATCH,
  launch,
  newRun,
  portIsClosed,
  processesOf,
  signalGroup,
  startToEnd,
  untilNoneLeft,
  untilRunning,
} from '../support/npmStartRun.ts';

afterEach(cleanUpRuns);

describe('npm start', () => {
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
    afterThisTest(() => void foreign.kill('SIGKILL'));
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
    afterThisTest(() => new Promise<void>((resolve) => foreign.close(() => resolve())));

    const ended = await startToEnd(run);
    expect(ended.code).toBe(1);
    expect(ended.stderr.trim().split('\n')).toEqual([
      `npm start: port ${run.port} is in use by another process; stop it, or use another port: LATCH_PORT=${run.port + 3} npm start`,
    ]);
    expect(existsSync(join(run.state, 'relay'))).toBe(false);
    expect(processesOf(run)).toEqual([]);
  });
});
