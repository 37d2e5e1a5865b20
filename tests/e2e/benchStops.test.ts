import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { descendantsOf, killAll, stillRunning } from '../support/processes.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

describe('npm run bench ended by a signal', () => {
  it('SIGTERM to the benchmark alone stops its relay, workerd and daemons before it exits', async () => {
    // The soak's smoke run: a relay, the benchmarks' daemon and the soak's own, all running.
    const bench = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke', '--only=soak'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let seen = new Map<number, number>();
    onTestFinished(() => killAll([bench.pid!, ...seen.keys()]));
    let output = '';
    bench.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    bench.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(bench, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const daemons = () => [...seen.keys()].filter((pid) => commandLine(pid).includes('latch.cjs daemon'));
    await expect
      .poll(
        () => {
          seen = descendantsOf(bench.pid!);
          return daemons().length;
        },
        { timeout: 60_000 },
      )
      .toBe(2);
    expect(
      [...seen.keys()].some((pid) => commandLine(pid).includes('workerd')),
      output,
    ).toBe(true);

    bench.kill('SIGTERM');
    const [code] = await exited;
    expect(code, output).toBe(128 + 15);
    expect(output).toContain('bench: SIGTERM, stopping what the run started');
    expect(
      [...seen].filter(([pid, start]) => stillRunning(pid, start)).map(([pid]) => commandLine(pid)),
    ).toEqual([]);
  });
});
