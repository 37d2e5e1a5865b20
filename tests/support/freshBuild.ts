import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { builtHash, ROOT, sourcesHash } from '../../scripts/buildStamp.ts';

/** One build at a time across vitest processes: the holder's pid, so a dead holder's lock is taken over. */
const LOCK = join(ROOT, 'dist', '.build.lock');
/** How long a run waits on another run's build: several builds, on a busy machine. */
const LOCK_PATIENCE_MS = 600_000;

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The pid in the lock; undefined while it is being written, or once it is gone. */
function lockHolder(): number | undefined {
  try {
    return Number(readFileSync(LOCK, 'utf8')) || undefined;
  } catch {
    return undefined;
  }
}

async function holdingTheBuildLock<T>(body: () => Promise<T>): Promise<T> {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const giveUp = Date.now() + LOCK_PATIENCE_MS;
  for (;;) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = lockHolder();
    if (holder !== undefined && !isAlive(holder)) rmSync(LOCK, { force: true });
    else if (Date.now() > giveUp) throw new Error(`${LOCK}: another test run has been building for too long`);
    else await sleep(250);
  }
  try {
    return await body();
  } finally {
    rmSync(LOCK, { force: true });
  }
}

function npmRunBuild(): Promise<number | null> {
  const build = spawn('npm', ['run', '--silent', 'build'], {
    cwd: ROOT,
    stdio: ['ignore', process.stderr, process.stderr],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
  });
  return new Promise((resolve, reject) => build.on('error', reject).on('exit', resolve));
}

/**
 * Before any test: dist/, which the tests' `latch` and relay run, built from the sources being
 * tested. A build runs only when what it reads changed since the last one (scripts/buildStamp.ts),
 * so `npm test`, which has just built, and an unchanged tree skip it. Not for an installed
 * package (LATCH_TEST_PACKAGE, scripts/test-other-nodes.ts): that is the build under test.
 */
export default async function setup(): Promise<void> {
  if (process.env['LATCH_TEST_PACKAGE']) return;
  if (builtHash() === sourcesHash()) return;
  await holdingTheBuildLock(async () => {
    // Another run may have built these very sources while this one waited.
    if (builtHash() === sourcesHash()) return;
    process.stderr.write('dist/ is older than the sources: npm run build\n');
    const code = await npmRunBuild();
    if (code !== 0 || builtHash() === undefined)
      throw new Error(`npm run build failed (exit ${code}): the tests would run a stale dist/`);
  });
}
