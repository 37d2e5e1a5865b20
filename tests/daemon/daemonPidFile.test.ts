import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { readProcessStat } from '../../daemon/exec/processStat.ts';
import { otherDaemonOf, writePidFile } from '../../daemon/socket/daemonPidFile.ts';

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

it.runIf(process.platform === 'linux')(
  'takes a record from another boot for no daemon: the same pid and start time after a restart are another process',
  () => {
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const otherBoot = bootId.replace(/^./, (first) => (first === '0' ? '1' : '0'));
    // A live process with its pid and start time, as the daemon of the boot before wrote them.
    const stale = pidFileFor(process.ppid);
    writeFileSync(stale, `${readFileSync(stale, 'utf8').trim()} ${otherBoot}\n`);
    expect(otherDaemonOf(stale)).toBeUndefined();
    // The same record from this boot is a daemon still running.
    const current = pidFileFor(process.ppid);
    writeFileSync(current, `${readFileSync(current, 'utf8').trim()} ${bootId}\n`);
    expect(otherDaemonOf(current)).toEqual({ pid: process.ppid, sure: true });
    // A record written before the boot id was (pid and start time only) is read as it was.
    expect(otherDaemonOf(pidFileFor(process.ppid))).toEqual({ pid: process.ppid, sure: true });
  },
);

it.runIf(process.platform === 'linux')('writes the boot id after the pid and start time', () => {
  const folder = mkdtempSync(join(tmpdir(), 'latch-pid-'));
  cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
  const path = join(folder, 'daemon.pid');
  writePidFile(path);
  expect(readFileSync(path, 'utf8')).toBe(
    `${process.pid} ${readProcessStat(process.pid)!.start} ${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}\n`,
  );
});
