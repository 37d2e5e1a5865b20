/**
 * The PWA's JavaScript budget: every .js file the build ships (app, lazy chunks, service worker),
 * gzipped, must total at most 40 KB. Run after `vite build`; fails the build when over.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';

export const PWA_BUDGET_BYTES = 40 * 1024;
const DIST = new URL('../dist/pwa', import.meta.url).pathname;

export function shippedJs(directory = DIST): { file: string; gzipped: number }[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.js'))
    .map((file) => ({ file, gzipped: gzipSync(readFileSync(join(directory, file)), { level: 9 }).length }));
}

if (process.argv[1] && relative(process.argv[1], new URL(import.meta.url).pathname) === '') {
  const files = shippedJs();
  const total = files.reduce((sum, { gzipped }) => sum + gzipped, 0);
  for (const { file, gzipped } of files)
    console.log(`  ${(gzipped / 1024).toFixed(1).padStart(6)} KB  ${file}`);
  console.log(
    `  ${(total / 1024).toFixed(1).padStart(6)} KB  PWA JavaScript, gzipped (budget ${PWA_BUDGET_BYTES / 1024} KB)`,
  );
  if (total > PWA_BUDGET_BYTES) {
    console.error(`over budget by ${((total - PWA_BUDGET_BYTES) / 1024).toFixed(1)} KB`);
    process.exit(1);
  }
}
