#!/usr/bin/env node
// The `latch` executable: runs the CLI from its bundles in dist/, which the package ships and
// `npm run build` makes in a checkout of the repository (npm start and npm test run it).
// CommonJS, like the hook's bundle: `latch hook claude-code`, which runs on every tool call an
// agent makes, skips the CLI parser and the ES module loader (the hook reads its own options).
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const [command, event] = process.argv.slice(2);
const hook = command === 'hook' && (event === 'claude-code' || event === 'codex');
// Exit 2 blocks the call in Claude Code and Codex; any other failure to start would let it run.
const fail = (message) => {
  process.stderr.write(`latch: ${message}\n`);
  process.exit(2);
};
const bundle = join(__dirname, '..', '..', 'dist', 'latch', hook ? 'hook.cjs' : 'main.mjs');
if (!existsSync(bundle)) fail('the CLI is not built; run `npm run build` in the repository');
try {
  if (hook) require(bundle);
  else import(require('node:url').pathToFileURL(bundle).href).catch((error) => fail(error.message));
} catch (error) {
  fail(`cannot start: ${error.message}`);
}
