#!/usr/bin/env node
// The `latch` executable: runs the CLI from its bundles in dist/, which the package ships and
// `npm run build` makes in a checkout of the repository (npm start and npm test run it).
// CommonJS, like the hook's and the daemon's bundles: `latch hook claude-code`, which runs on
// every tool call an agent makes, and `latch daemon`, which runs for months, skip the CLI parser
// and the ES module loader (the hook reads its own options; the daemon takes none, and with
// anything after it, `--help` say, the parser answers).
const { existsSync } = require('node:fs');
const { join } = require('node:path');

// Node opens its inspector on SIGUSR1 for anyone allowed to signal this process, an agent running
// as the same user included, and code run through it could answer for a phone or read the keys.
// A listener takes the signal instead (the hook's guard answers it with a deny). First, so that
// the window before it, Node's own start-up, is as short as it can be.
process.on('SIGUSR1', () => {});

const [command, event] = process.argv.slice(2);
const hook = command === 'hook' && (event === 'claude-code' || event === 'codex');
const daemon = command === 'daemon' && process.argv.length === 3;
// Exit 2 blocks the call in Claude Code and Codex; any other failure to start would let it run.
const fail = (message) => {
  process.stderr.write(`latch: ${message}\n`);
  process.exit(2);
};
// `latch daemon` runs for months, and what V8 keeps for speed outweighs its work (issue 16,
// bench/daemonMemory.ts: 66.7 MB → 56.7 MB after 1,000 calls, the same CPU per call; its own
// CommonJS bundle took 1.5 MB more). Set here, before any bundle loads, because module loading
// is what runs the optimising compiler (whose code alone pages in 4 MB of the node binary) and
// grows the young generation to 4 MB:
// - --max-opt=1: Sparkplug's baseline code, no TurboFan;
// - --semi-space-growth-factor=1: the young generation stays at its first 1 MB;
// - --optimize-for-size: the heap is sized and collected for memory rather than speed.
// V8 reads all three as it runs. The cost: Node's code cache for its own modules, checked
// against the flags, is refused for those loaded from here on; start-up CPU stayed within noise.
if (daemon)
  require('node:v8').setFlagsFromString('--max-opt=1 --semi-space-growth-factor=1 --optimize-for-size');
const bundle = join(
  __dirname,
  '..',
  '..',
  'dist',
  'latch',
  hook ? 'hook.cjs' : daemon ? 'daemon.cjs' : 'main.mjs',
);
if (!existsSync(bundle)) fail('the CLI is not built; run `npm run build` in the repository');
// A hook bundle cut short (an upgrade rewriting it, a disk that filled) can load and end without
// a word: exit 0 and silence, on which the agent runs the tool. So the hook ends with exit 2 (the
// installed command's failsafe says why) unless the hook itself exits with its answer.
if (hook) process.exitCode = 2;
try {
  if (hook) {
    const { run } = require(bundle);
    if (typeof run !== 'function') fail('the hook is not whole; run `npm run build`, or install Latch again');
    run().catch((error) => fail(`internal error: ${error.message}`));
  } else if (daemon) require(bundle);
  else import(require('node:url').pathToFileURL(bundle).href).catch((error) => fail(error.message));
} catch (error) {
  fail(`cannot start: ${error.message}`);
}
