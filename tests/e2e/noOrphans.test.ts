import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { findRunProcesses } from '../../daemon/exec/findRunProcesses.ts';
import { endTestRun, TEST_RUN } from '../support/noOrphans.ts';
import { stillRunning } from '../support/processes.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const FIXTURE = new URL('./fixtures/orphans/vitest.config.ts', import.meta.url).pathname;

interface Report {
  run: string;
  pids: Record<'relay' | 'workerd' | 'daemon' | 'exec' | 'command', number[]>;
  started: Record<string, number>;
  /** What the fixture made on disk (a relay's state, a daemon's home): the teardown removes it. */
  folders: string[];
}

describe('no orphans', () => {
  it('a suite whose worker is killed mid-test leaves no relay, workerd, daemon, latch exec or temporary folder behind', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'latch-no-orphans-'));
    onTestFinished(() => rmSync(scratch, { recursive: true, force: true }));
    const reportPath = join(scratch, 'report.json');
    const vitest = spawn(
      process.execPath,
      [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', FIXTURE],
      {
        cwd: ROOT,
        env: { ...process.env, ORPHANS_REPORT: reportPath },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    vitest.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    vitest.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = (await once(vitest, 'exit')) as [number | null];
    // The fixture got as far as starting everything: else what failed is in its output.
    expect(existsSync(reportPath), output).toBe(true);
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    // Whatever this test finds, it leaves nothing running itself.
    onTestFinished(async () => {
      await endTestRun(report.run);
      for (const folder of report.folders) rmSync(folder, { recursive: true, force: true });
    });

    expect(code, output).not.toBe(0);
    expect(output).toContain('Worker exited unexpectedly');
    // The fixture started each of them, workerd among the relay's group.
    for (const pids of Object.values(report.pids))
      expect(pids.length, JSON.stringify(report)).toBeGreaterThan(0);
    expect(report.run).not.toBe(process.env[TEST_RUN]);

    const left = Object.entries(report.started).filter(([pid, start]) => stillRunning(Number(pid), start));
    expect(left, output).toEqual([]);
    expect([...findRunProcesses(undefined, report.run, new Map(), { variable: TEST_RUN }).keys()]).toEqual(
      [],
    );
    // Made under the run's own temporary folder, which its teardown removed with them.
    expect(report.folders.length).toBeGreaterThan(0);
    expect(report.folders.filter((folder) => existsSync(folder))).toEqual([]);
  });
});
