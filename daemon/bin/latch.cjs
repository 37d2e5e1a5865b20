#!/usr/bin/env node
// The `latch` executable: runs the CLI from its bundles, built by `npm install` (prepare).
// CommonJS, like the hook's bundle: `latch hook claude-code` runs on every tool call an agent
// makes, and skips the CLI parser and the ES module loader.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const [command, event, ...rest] = process.argv.slice(2);
const hook = command === 'hook' && (event === 'claude-code' || event === 'codex') && rest.length === 0;
const bundle = join(__dirname, '..', '..', 'dist', 'latch', hook ? 'hook.cjs' : 'main.mjs');
if (!existsSync(bundle)) {
  process.stderr.write(
    'latch: the CLI is not built; run `npm install` (or `npm run build`) in the repository\n',
  );
  process.exit(2);
}
if (hook) require(bundle);
else import(require('node:url').pathToFileURL(bundle).href);
