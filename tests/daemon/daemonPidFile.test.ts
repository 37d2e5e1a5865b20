import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { readProcessStat } from '../../daemon/exec/processStat.ts';
import { otherDaemonOf } from '../../daemon/socket/daemonPidFile.ts';

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.reverse()) cleanup();
  cleanups = [];
});

/** A pid file naming `pid` with its start time, as a running daemon writes it. */
function pidFileFor(pid: number): string {
  const folder = mkdtempSync(join(tmpdir(), 'latch-pid-'));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  const path = join(folder, 'daemon.pid');
  writeFileSync(path, `${pid} ${readProcessStat(pid)!.start}\n`, { mode: 0o600 });
  return path;
}

it.runIf(process.platform === 'linux')(
  'takes a zombie for a daemon gone: killed, it keeps its start time until a parent that never reaps it ends',
  async () => {
    // A parent that never reaps its child: the child, ended, stays a zombie while the parent sleeps.
    const parent = spawn(
      'python3',
      [
        '-c',
        'import os, sys, time\npid = os.fork()\nif pid == 0: os._exit(0)\nprint(pid, flush=True)\ntime.sleep(60)',
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    cleanups.push(() => parent.kill('SIGKILL'));
    const child = Number(
      await new Promise<string>((resolve) => parent.stdout!.once('data', (data) => resolve(String(data)))),
    );
    await expect.poll(() => readProcessStat(child)?.state).toBe('Z');
    expect(otherDaemonOf(pidFileFor(child))).toBeUndefined();
    // A live process under the same file's rule is a daemon still running.
    expect(otherDaemonOf(pidFileFor(parent.pid!))).toEqual({ pid: parent.pid, sure: true });
  },
);
