import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { builtHash, ROOT, sourcesHash } from './buildStamp.ts';

/**
 * Latch as a user gets it: the package packed from this repository, as `npm publish` would upload
 * it, then installed with `npm install --global` into a prefix of its own. `env` adds npm
 * settings: `npm_config_ignore_scripts=true` leaves better-sqlite3 unbuilt (only Node 20 needs it;
 * npm ignores `--omit=optional` for a global install).
 */

/** What the build must have made for the package to hold anything that runs. */
const BUILT = ['dist/latch/main.mjs', 'dist/latch/hook.cjs', 'dist/sdk/latch.d.ts', 'dist/relay/index.js'];

export interface PackedLatch {
  tarball: string;
  /** Every path in the tarball, relative to the package's root. */
  files: string[];
  /** The tarball's bytes, and its contents' unpacked. */
  size: number;
  unpackedSize: number;
}

export interface InstalledLatch {
  prefix: string;
  /** The `latch` npm linked onto `<prefix>/bin`. */
  bin: string;
  /** The installed package: `<prefix>/lib/node_modules/@latchhq/latch`. */
  packageDir: string;
  /** How long `npm install` took, native build included. */
  seconds: number;
}

function npm(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }) {
  const ran = spawnSync('npm', args, { ...options, encoding: 'utf8', timeout: options.timeoutMs });
  if (ran.status !== 0)
    throw new Error(
      `npm ${args.join(' ')} failed (${ran.error?.message ?? ran.status}):\n${ran.stdout}\n${ran.stderr}`,
    );
  return ran.stdout;
}

/**
 * `npm pack` into `destination`. The repository is built first only if dist/ is missing or older
 * than the sources (scripts/buildStamp.ts): a build here would replace dist/ under the tests
 * running beside this one, so the pack skips `prepack` (which a plain `npm pack` runs) and packs
 * the build `npm test` or the tests' global setup made.
 */
export function packLatch(destination: string, env: NodeJS.ProcessEnv = {}): PackedLatch {
  const fullEnv = { ...process.env, WRANGLER_SEND_METRICS: 'false', ...env };
  if (!BUILT.every((file) => existsSync(join(ROOT, file))) || builtHash() !== sourcesHash())
    npm(['run', '--silent', 'build'], { cwd: ROOT, env: fullEnv, timeoutMs: 300_000 });
  const stdout = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', destination], {
    cwd: ROOT,
    env: fullEnv,
    timeoutMs: 120_000,
  });
  const [packed] = JSON.parse(stdout) as {
    filename: string;
    files: { path: string }[];
    size: number;
    unpackedSize: number;
  }[];
  if (!packed) throw new Error(`npm pack printed no package: ${stdout}`);
  return {
    tarball: join(destination, packed.filename),
    files: packed.files.map((file) => file.path),
    size: packed.size,
    unpackedSize: packed.unpackedSize,
  };
}

/**
 * `npm install --global --prefix <prefix> <tarball>`, from the npm cache where it can be (the
 * registry otherwise), with better-sqlite3 built from source against the Node headers npm is set
 * to use: `npm_config_build_from_source` stops prebuild-install from fetching a prebuilt binary,
 * which here would fail, or hang where the network drops what it cannot reach.
 */
export function installLatch(
  tarball: string,
  prefix: string,
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): InstalledLatch {
  mkdirSync(prefix, { recursive: true });
  const started = performance.now();
  npm(['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    // Outside the repository: no project of ours around the install.
    cwd: prefix,
    env: { ...process.env, npm_config_build_from_source: 'true', ...options.env },
    timeoutMs: options.timeoutMs ?? 600_000,
  });
  return {
    prefix,
    bin: join(prefix, 'bin', 'latch'),
    packageDir: join(prefix, 'lib', 'node_modules', '@latchhq', 'latch'),
    seconds: (performance.now() - started) / 1000,
  };
}
