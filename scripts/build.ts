/**
 * Builds the `latch` CLI: bundles instead of TypeScript at run time, because hook latency is
 * what an agent waits on for every tool call.
 *
 * - dist/latch/main.mjs: every command, one chunk per command, loaded when it runs;
 * - dist/latch/hook.cjs: `latch hook claude-code` alone, as CommonJS (faster to load);
 * - dist/latch/daemon.cjs: `latch daemon` alone, as CommonJS (less resident memory);
 * - dist/sdk/latch.mjs: the SDK guard, what `import { connect } from '@latchhq/latch'` loads;
 * - dist/sdk/latch.d.ts and dist/sdk/types/: its declarations (see emitSdkTypes).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { build as esbuild, type BuildOptions, type Plugin } from 'esbuild';
import ts from 'typescript';

/** The one package the bundles load from node_modules: native, it cannot be bundled. */
const NATIVE_PACKAGE = 'better-sqlite3';

/**
 * `ws` tries two optional native add-ons (`require('bufferutil')`, `require('utf-8-validate')`)
 * and goes on without them. Left to Node, that search reaches folders an agent can write
 * (`~/.node_modules`, any node_modules above the package): a file planted there would run in the
 * daemon, with its keys, at its next start. Bundled as absent, the search never happens.
 */
const optionalAddonsAbsent: Plugin = {
  name: 'optional-addons-absent',
  setup(build) {
    build.onResolve({ filter: /^(bufferutil|utf-8-validate)$/ }, (args) => ({
      path: args.path,
      namespace: 'absent',
    }));
    build.onLoad({ filter: /.*/, namespace: 'absent' }, () => ({
      contents: "throw new Error('not bundled');",
      loader: 'js',
    }));
  },
};

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: [NATIVE_PACKAGE],
  plugins: [optionalAddonsAbsent],
  metafile: true,
  logLevel: 'warning',
};

/**
 * A bundle, checked to load nothing by name but Node's own modules and better-sqlite3, whose
 * folders `latchProgram` protects: any other name is looked for in folders an agent can write.
 */
async function build(options: BuildOptions): Promise<void> {
  const { metafile } = await esbuild(options);
  const builtin = new Set(builtinModules);
  const loaded = Object.values(metafile!.outputs).flatMap((output) => output.imports);
  const unprotected = loaded.filter(
    ({ path, external }) =>
      external && !path.startsWith('node:') && !builtin.has(path) && path !== NATIVE_PACKAGE,
  );
  if (unprotected.length > 0)
    throw new Error(
      `the bundles would load from node_modules: ${unprotected.map(({ path }) => path).join(', ')}`,
    );
}

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

// The two commands that skip the CLI parser, as CommonJS: the hook, which an agent waits on for
// every tool call, and the daemon, which runs for months.
const commonJs = { ...common, outdir: 'dist/latch', outExtension: { '.js': '.cjs' }, format: 'cjs' } as const;
await build({ ...commonJs, entryPoints: { hook: 'daemon/cli/hookEntry.ts' } });
// A CommonJS module has no import.meta: the daemon's modules that find the package's files from
// their own place read the bundle's path instead. Built apart, so the hook does not pay for it.
await build({
  ...commonJs,
  entryPoints: { daemon: 'daemon/cli/daemonEntry.ts' },
  define: { 'import.meta.url': '__latchModuleUrl' },
  banner: { js: "const __latchModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
});

await build({
  ...common,
  entryPoints: { latch: 'daemon/sdk/latch.ts' },
  outdir: 'dist/sdk',
  outExtension: { '.js': '.mjs' },
  format: 'esm',
});

/**
 * The SDK's declarations, for a consumer's TypeScript (`"moduleResolution": "nodenext"`): tsc
 * emits the declarations of the SDK's whole import graph; only the files the public surface
 * reaches are kept (the SDK's own, and the protocol types it names), in their folders under
 * dist/sdk/types/ so their relative imports hold. The sources import with `.ts` extensions, which
 * declaration emit keeps even with rewriteRelativeImportExtensions; they become `.js`, which
 * every TypeScript that reads `exports` resolves to the `.d.ts` beside it.
 */
function emitSdkTypes(entry: string, outDir: string): void {
  const root = process.cwd();
  const { config } = ts.readConfigFile('tsconfig.json', ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root);
  const emitted = new Map<string, string>();
  const program = ts.createProgram([entry], {
    ...options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: root,
    outDir: join(root, outDir, 'types'),
  });
  const result = program.emit(undefined, (file, text) => emitted.set(file, text));
  const problems = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (problems.length > 0)
    throw new Error(
      ts.formatDiagnostics(problems, { ...ts.createCompilerHost(options), getNewLine: () => '\n' }),
    );

  const specifiers = /(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\.ts\2/g;
  const start = join(root, outDir, 'types', entry.replace(/\.ts$/, '.d.ts'));
  const reached = new Set<string>();
  const walk = (file: string): void => {
    if (reached.has(file)) return;
    const text = emitted.get(file);
    if (text === undefined) throw new Error(`no declarations emitted for ${relative(root, file)}`);
    reached.add(file);
    for (const [, , , specifier] of text.matchAll(specifiers)) walk(join(dirname(file), `${specifier}.d.ts`));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text.replace(specifiers, '$1$2$3.js$2'));
  };
  walk(start);
  const stub = `export * from './${relative(join(root, outDir), start).replace(/\.d\.ts$/, '.js')}';\n`;
  writeFileSync(join(root, outDir, 'latch.d.ts'), stub);
}

emitSdkTypes('daemon/sdk/latch.ts', 'dist/sdk');
