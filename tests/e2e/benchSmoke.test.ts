import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

describe('npm run bench -- --smoke', () => {
  it('runs every benchmark with a few samples and prints the table, each figure beside a baseline', () => {
    const ran = spawnSync('npm', ['run', '--silent', 'bench', '--', '--smoke'], {
      cwd: ROOT,
      encoding: 'utf8',
      // A hang detector: the build and every benchmark (the soak's 400 calls on a daemon of its
      // own among them) on two cores shared with other jobs. Below the test's own timeout.
      timeout: 280_000,
    });
    expect(ran.status, ran.stderr).toBe(0);
    const table = ran.stdout.slice(ran.stdout.indexOf('benchmark'));
    for (const name of [
      'tap→unblocked',
      'request→push',
      'peer: poll every',
      'hook overhead',
      'in-process guard',
      'relay throughput',
      'PWA JavaScript',
      'notification click → interactive',
      'daemon RSS',
      'freeze fan-out',
      'cost: requests per approval',
      'cost: idle day',
      'soak: rss',
      'soak: open fds',
      'soak: state size',
      'soak: audit size',
      'soak: errors',
    ]) {
      expect(table, name).toContain(name);
    }
    expect(table).toContain('baseline (same run)');
  }, 300_000);
});
