/**
 * Builds the `latch` CLI into one ESM bundle, so that a hook call starts one file instead of
 * transpiling TypeScript: hook latency is what an agent waits on for every tool call.
 */
import { build } from 'esbuild';

await build({
  entryPoints: ['daemon/cli/main.ts'],
  outfile: 'dist/latch.mjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Native and large packages stay in node_modules.
  external: ['better-sqlite3'],
  banner: {
    js: "import { createRequire as __latchCreateRequire } from 'node:module'; const require = __latchCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
