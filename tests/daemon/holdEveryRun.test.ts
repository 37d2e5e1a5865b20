import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { holdEveryRun } from '../../daemon/exec/holdEveryRun.ts';
import { RUN_MARKER, runMarker } from '../../daemon/exec/findRunProcesses.ts';
import { readProcessStat } from '../../daemon/exec/processStat.ts';
import { isHeld } from '../support/processes.ts';

/** Room for spawned processes on a busy machine: a bound on waiting, never a measure of speed. */
const PATIENCE = { timeout: 10_000 };

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
});

/** A process as a run of latch exec made for the daemon on `socket` leaves it. */
function runFor(socket: string): number {
  const child = spawn('sleep', ['600'], {
    env: { ...process.env, [RUN_MARKER]: runMarker(socket) },
    stdio: 'ignore',
  });
  started.push(child);
  return child.pid!;
}

describe('the daemon’s own hold on the runs of latch exec (review sd, review rw)', () => {
  it('holds the runs made for its socket on a freeze, not another daemon’s, and continues them on resume', async () => {
    const ours = runFor('/run/user/1000/latch/latch.sock');
    const anotherDaemons = runFor('/tmp/a-test/latch/latch.sock');
    const everyRun = holdEveryRun('/run/user/1000/latch/latch.sock');
    try {
      everyRun.follow(true, 'stop');
      await expect.poll(() => isHeld(ours), PATIENCE).toBe(true);
      expect(isHeld(anotherDaemons)).toBe(false);
      everyRun.follow(false, 'stop');
      await expect.poll(() => isHeld(ours), PATIENCE).toBe(false);
    } finally {
      everyRun.stop();
    }
  });

  it('with on_freeze = "terminate", kills what is left of its runs once a live latch exec would have ended them', async () => {
    const orphan = runFor('/run/user/1000/latch/latch.sock');
    const everyRun = holdEveryRun('/run/user/1000/latch/latch.sock');
    try {
      everyRun.follow(true, 'terminate');
      await expect
        .poll(() => existsSync(`/proc/${orphan}`) && readProcessStat(orphan)?.state !== 'Z', {
          timeout: 20_000,
        })
        .toBe(false);
    } finally {
      everyRun.stop();
    }
  });
});
