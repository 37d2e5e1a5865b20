/**
 * The suites again on the other Node versions users run, against Latch as users install it: the
 * packed package, with its optional better-sqlite3 left unbuilt (Node 22 and 24 have SQLite built
 * in; only Node 20, which `npm test` runs first, needs it). Each Node comes from the npm registry
 * (the `node` package), kept in node_modules/.cache.
 *
 * The test runner itself runs on that Node, so the SDK and every in-process module run there too;
 * the tests' `latch` is the installed package's (tests/support/latchCli.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installLatch, packLatch } from './packageInstall.ts';

const NODES = [
  // The daemon, SDK and end-to-end suites, whole.
  {
    version: '24.21.0',
    suites: ['tests/daemon', 'tests/e2e/approvalLoop.test.ts', 'tests/e2e/relayFaults.test.ts'],
  },
  // Node 22's SQLite differs from 24's (and warns that it is experimental): the CLI, the hook,
  // the SDK and the state, through real processes.
  {
    version: '22.23.3',
    suites: [
      'tests/daemon/cliUsageErrors.test.ts',
      'tests/daemon/cliWithDaemon.test.ts',
      'tests/daemon/cliWithoutDaemon.test.ts',
      'tests/daemon/cliConfig.test.ts',
      'tests/daemon/cliCompletion.test.ts',
      'tests/daemon/hook.test.ts',
      'tests/daemon/sdk.test.ts',
      'tests/daemon/sqlite.test.ts',
      'tests/daemon/freezeOnHost.test.ts',
      'tests/daemon/freezeReplay.test.ts',
      'tests/daemon/freezeStateUpgrade.test.ts',
    ],
  },
];

/** `node@<version>` from the registry; its path. */
function fetchNode(version: string): string {
  const cache = join('node_modules', '.cache', `node-${version}`);
  const node = join(cache, 'node_modules', 'node', 'bin', 'node');
  if (existsSync(node)) return node;
  // The package's install script places the binary: allowed here, by name, as npm asks.
  mkdirSync(cache, { recursive: true });
  writeFileSync(join(cache, 'package.json'), JSON.stringify({ private: true, allowScripts: { node: true } }));
  const ran = spawnSync(
    'npm',
    ['install', '--prefix', cache, '--no-save', '--no-audit', '--no-fund', `node@${version}`],
    { stdio: 'inherit' },
  );
  if (ran.status !== 0 || !existsSync(node)) throw new Error(`could not install node@${version} from npm`);
  return node;
}

function runSuites(node: string, packageDir: string, suites: string[]): Promise<number> {
  const vitest = spawn(
    node,
    ['node_modules/vitest/vitest.mjs', 'run', '--project', 'node', '--project', 'browser', ...suites],
    { stdio: 'inherit', env: { ...process.env, LATCH_TEST_PACKAGE: packageDir } },
  );
  // Ctrl-C reaches vitest too (same process group); its exit ends this run.
  return new Promise((resolve) => vitest.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

// Test files or folders on the command line narrow every run.
const chosenSuites = process.argv.length > 2 ? process.argv.slice(2) : undefined;
const work = mkdtempSync(join(tmpdir(), 'latch-nodes-'));
try {
  const packed = packLatch(work);
  const installed = installLatch(packed.tarball, join(work, 'prefix'), {
    env: { npm_config_ignore_scripts: 'true' },
  });
  for (const { version, suites } of NODES) {
    const node = fetchNode(version);
    console.log(`\nNode ${version}: ${packed.tarball}, installed in ${installed.seconds.toFixed(1)} s`);
    const code = await runSuites(node, installed.packageDir, chosenSuites ?? suites);
    if (code !== 0) {
      console.error(`test-other-nodes: the suites failed on Node ${version}`);
      process.exitCode = code;
      break;
    }
  }
} catch (error) {
  console.error(`test-other-nodes: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
