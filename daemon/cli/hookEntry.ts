// The fast path of `latch hook claude-code`, which an agent waits on for every tool call: the
// hook alone, without the command-line parser, as one CommonJS file (daemon/bin/latch.cjs picks
// it), which Node loads faster than an ES module graph.
// daemon/bin/latch.cjs runs it, so that a bundle cut short, whose `run` is missing, is a deny.
export { run } from './commands/hook.ts';
