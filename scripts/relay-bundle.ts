/**
 * Builds the relay as the package ships it, for `latch relay deploy` on a machine that has only
 * the package (no sources, no node_modules of ours):
 *
 * - dist/relay/index.js: the Worker exactly as `wrangler deploy` from this repository would
 *   upload it (wrangler's own bundling, with its nodejs_compat handling, made with --dry-run);
 * - dist/relay/wrangler.json: wrangler.toml itself, read here, with `main` pointing at that
 *   bundle (uploaded as it is: no_bundle) and the assets at dist/pwa. One source for the
 *   Durable Object bindings and the migrations: the package cannot drift from the repository.
 *
 * Run after the PWA's build: wrangler reads the assets' folder even on a dry run.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';

const ROOT = new URL('..', import.meta.url).pathname;
const OUT = join(ROOT, 'dist', 'relay');

const source = parse(readFileSync(join(ROOT, 'wrangler.toml'), 'utf8')) as Record<string, unknown> & {
  assets?: Record<string, unknown>;
};
if (source['assets']?.['directory'] !== 'dist/pwa')
  throw new Error('wrangler.toml: expected [assets] directory = "dist/pwa"');

// Bundled by wrangler itself, from wrangler.toml, into a folder of its own first: a failed build
// leaves no half-written dist/relay behind.
const scratch = mkdtempSync(join(tmpdir(), 'latch-relay-bundle-'));
try {
  const wrangler = spawnSync(
    join(ROOT, 'node_modules', '.bin', 'wrangler'),
    ['deploy', '--dry-run', '--outdir', scratch, '--config', join(ROOT, 'wrangler.toml')],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
  );
  if (wrangler.status !== 0)
    throw new Error(`wrangler could not bundle the relay:\n${wrangler.stdout}\n${wrangler.stderr}`);
  // One module: with no_bundle, wrangler uploads `main` and nothing else.
  const modules = readdirSync(scratch).filter((file) => /\.(m?js|cjs|wasm)$/.test(file));
  if (modules.join() !== 'index.js')
    throw new Error(`the relay's bundle is more than index.js (${modules.join(', ')}): ship them all`);

  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  copyFileSync(join(scratch, 'index.js'), join(OUT, 'index.js'));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

// Paths relative to dist/relay/, as wrangler reads them from the config's own folder: this file
// deploys as it is, and `latch relay deploy` makes them absolute in the copy it writes.
const config = {
  ...source,
  main: 'index.js',
  no_bundle: true,
  assets: { ...source.assets, directory: '../pwa' },
};
writeFileSync(join(OUT, 'wrangler.json'), `${JSON.stringify(config, null, 2)}\n`);
