/**
 * Builds the `latch` CLI: bundles instead of TypeScript at run time, because hook latency is
 * what an agent waits on for every tool call.
 *
 * - dist/latch/main.mjs: every command, one chunk per command, loaded when it runs;
 * - dist/latch/hook.cjs: `latch hook claude-code` alone, as CommonJS (faster to load);
 * - dist/sdk/latch.mjs: the SDK guard, what `import { connect } from 'latch'` loads.
 */
import { rmSync } from 'node:fs';
import { build, type BuildOptions } from 'esbuild';

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Native packages stay in node_modules.
  external: ['better-sqlite3'],
  logLevel: 'warning',
};

rmSync('dist/latch', { recursive: true, force: true });
rmSync('dist/sdk', { recursive: true, force: true });

await build({
  ...common,
  entryPoints: { main: 'daemon/cli/main.ts' },
  outdir: 'dist/latch',
  outExtension: { '.js': '.mjs' },
  format: 'esm',
  splitting: true,
  banner: {
    js: "import { createRequire as __latchCreateRequire } from 'node:module'; const require = __latchCreateRequire(import.meta.url);",
  },
});

await build({
  ...common,
  entryPoints: { hook: 'daemon/cli/hookEntry.ts' },
  outdir: 'dist/latch',
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
});

await build({
  ...common,
  entryPoints: { latch: 'daemon/sdk/latch.ts' },
  outdir: 'dist/sdk',
  outExtension: { '.js': '.mjs' },
  format: 'esm',
});
