import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/buildStamp.ts';

/**
 * No stale builds: the tests run dist/, and `npx vitest run <file>` after a source change runs
 * that change (tests/support/freshBuild.ts). Shown in a copy of the repository, whose CLI's
 * source is changed, and whose test checks the built CLI for the change.
 */

/** The copy has no dist/ of its own: its first run builds, as a fresh clone's would. */
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', '.wrangler', 'test-output', '.stryker-tmp']);
const BUILDING = 'dist/ is older than the sources: npm run build';

const PROBE = `import { execFileSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { LATCH_BIN } from '../support/latchCli.ts';

it('runs the CLI built from these sources', () => {
  const version = execFileSync(process.execPath, [LATCH_BIN, '--version'], { encoding: 'utf8' });
  expect(version.includes('(edited)')).toBe(process.env['EXPECT_EDITED'] === 'yes');
});
`;

describe.skipIf(process.env['LATCH_TEST_PACKAGE'])('a test run after a source change', () => {
  let copy: string;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'latch-stale-build-'));
    cpSync(ROOT, copy, { recursive: true, filter: (path) => !NOT_COPIED.has(basename(path)) });
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    writeFileSync(join(copy, 'tests/daemon/versionProbe.test.ts'), PROBE);
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  /** The copy's own `npx vitest run` of the probe, expecting the CLI edited or not. */
  const vitestRun = (edited: boolean) => {
    const vitest = spawn(
      process.execPath,
      ['node_modules/vitest/vitest.mjs', 'run', '--project', 'node', 'tests/daemon/versionProbe.test.ts'],
      {
        cwd: copy,
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', EXPECT_EDITED: edited ? 'yes' : 'no' },
      },
    );
    let output = '';
    let stderr = '';
    vitest.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    vitest.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      output += chunk.toString();
    });
    return new Promise<{ code: number | null; stderr: string; output: string }>((resolve) =>
      vitest.on('close', (code) => resolve({ code, stderr, output })),
    );
  };

  it('tests the changed code after a source change, and builds nothing while the sources stay the same', async () => {
    const built = await vitestRun(false);
    expect(built.stderr).toContain(BUILDING);
    expect(built.code, built.output).toBe(0);

    const unchanged = await vitestRun(false);
    expect(unchanged.stderr).not.toContain(BUILDING);
    expect(unchanged.code, unchanged.output).toBe(0);

    const main = join(copy, 'daemon/cli/main.ts');
    const source = readFileSync(main, 'utf8');
    expect(source).toContain('(protocol v${PROTOCOL_VERSION})');
    writeFileSync(
      main,
      source.replace('(protocol v${PROTOCOL_VERSION})', '(protocol v${PROTOCOL_VERSION}) (edited)'),
    );
    // Two runs started together: one builds, the other waits for that build and tests it.
    const together = await Promise.all([vitestRun(true), vitestRun(true)]);
    expect(together.filter((run) => run.stderr.includes(BUILDING))).toHaveLength(1);
    for (const run of together) expect(run.code, run.output).toBe(0);
  }, 600_000);
});
