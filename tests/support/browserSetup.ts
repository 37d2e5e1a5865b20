import { spawnSync } from 'node:child_process';
import { findChromium } from './findChromium.ts';

const INSTALL_HINT =
  'the browser tests need Chromium: install it (Debian: apt-get install chromium; macOS: Google Chrome), or set CHROMIUM_PATH';

/** Runs a command in the foreground, its output shown: an install is worth watching. */
const run = (command: string, args: string[]) => spawnSync(command, args, { stdio: 'inherit' }).status === 0;

/**
 * Before the browser tests: a Chromium, found (CHROMIUM_PATH, then the system's) or installed
 * where this machine can (as root with apt, Debian's `chromium`). Otherwise the run stops here
 * with what to install; the tests are never skipped in silence.
 */
export default function setup(): void {
  if (findChromium()) return;
  if (process.env['CHROMIUM_PATH'])
    throw new Error(`CHROMIUM_PATH=${process.env['CHROMIUM_PATH']} does not exist`);
  const canApt =
    process.getuid?.() === 0 && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!canApt) throw new Error(INSTALL_HINT);
  process.stderr.write('browser tests: no Chromium found; installing Debian’s chromium with apt-get\n');
  // The package lists may be stale or missing on a fresh machine; the install may work without them.
  run('apt-get', ['update']);
  if (!run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium']) || !findChromium())
    throw new Error(`apt-get could not install chromium; ${INSTALL_HINT}`);
}
