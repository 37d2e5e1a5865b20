/**
 * The build's stamp: a hash of everything `npm run build` reads, kept in dist/, so that a test
 * run can tell a build of the sources it tests from yesterday's (tests/support/freshBuild.ts).
 * Content, not modification times: a checkout or a rebuild that changes nothing costs nothing.
 *
 * `npm run build` calls `begin` first, which hashes the sources as the build reads them and drops
 * the old stamp, then `end` last, which makes that hash the stamp: an edit made while the build
 * runs, or a build that fails, leaves the stamp behind the sources, never ahead.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';

export const ROOT = new URL('..', import.meta.url).pathname.replace(/\/$/, '');

/** What the build reads: the three programs, the protocol, the build's scripts and its settings. */
const BUILD_INPUTS = [
  'daemon',
  'shared',
  'pwa',
  'relay',
  'scripts/build.ts',
  'scripts/buildStamp.ts',
  'scripts/pwa-budget.ts',
  'scripts/relay-bundle.ts',
  'package.json',
  'package-lock.json',
  'wrangler.toml',
  'tsconfig.json',
  'tsconfig.base.json',
];

const STAMP = join(ROOT, 'dist', '.sources.sha256');
const PENDING = join(ROOT, 'dist', '.sources.building');

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.parentPath.split('/').includes('node_modules'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The hash of every file the build reads, by path and content. */
export function sourcesHash(): string {
  const hash = createHash('sha256');
  const files = BUILD_INPUTS.flatMap((input) => filesUnder(join(ROOT, input))).sort();
  for (const file of files)
    hash
      .update(`${relative(ROOT, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex');
}

/** The hash of the sources dist/ was last built from, if a build finished. */
export function builtHash(): string | undefined {
  return existsSync(STAMP) ? readFileSync(STAMP, 'utf8').trim() : undefined;
}

if (process.argv[1] && relative(process.argv[1], new URL(import.meta.url).pathname) === '') {
  const step = process.argv[2];
  if (step === 'begin') {
    mkdirSync(join(ROOT, 'dist'), { recursive: true });
    rmSync(STAMP, { force: true });
    writeFileSync(PENDING, `${sourcesHash()}\n`);
  } else if (step === 'end') {
    renameSync(PENDING, STAMP);
  } else {
    console.error('usage: tsx scripts/buildStamp.ts begin|end');
    process.exit(2);
  }
}
