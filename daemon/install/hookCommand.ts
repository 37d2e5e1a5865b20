import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { latchHome } from '../config/paths.ts';
import type { Agent } from './agents.ts';
import { shellQuote } from './shellWords.ts';

/**
 * `daemon/bin/latch.cjs`, as a real path (an `npm link` or a symlinked checkout resolved). This
 * module runs bundled in `dist/latch/` or as source in `daemon/install/`: two levels below the
 * package's root either way.
 */
export function latchScriptPath(): string {
  return realpathSync(fileURLToPath(new URL('../../daemon/bin/latch.cjs', import.meta.url)));
}

/** The failsafe's line on stderr, which `latch doctor` tells from the hook's own answer. */
export const HOOK_FAILSAFE_LINE = 'latch: blocked (with no reason above, the hook ended without an answer)';

/**
 * What the agent's shell runs when the hook ended without its answer: exit 2, the one code that
 * blocks, with a reason on stderr, without which Codex runs the tool all the same (zsh and fish
 * print nothing for a killed child). The hook answers every failure it can see itself; this
 * covers the deaths no JavaScript can catch (SIGKILL, V8 out of memory, a Node binary gone after
 * an upgrade: exit 127 from HOOK_LAUNCHER), after which the agent would run the tool. Every shell
 * agents use reads it alike (sh, bash, zsh, fish; Codex runs hooks with the user's `$SHELL -lc`): fish has no
 * `{ …; }`, and `a || b && c` would exit 2 after a hook that answered. It also follows the hook's
 * own exit 2 (Codex's deny, whose reason comes first), so its line is true of both.
 */
export const HOOK_FAILSAFE = `|| /bin/sh -c 'echo "${HOOK_FAILSAFE_LINE}" >&2; exit 2'`;

/**
 * What starts the hook's Node: a program that is always there, so that the shell always starts
 * something that exits. fish does not run `|| …` after a command it cannot start (a Node gone
 * after an upgrade: 127, or not executable: 126); env, which always starts, exits with that
 * code itself, after which every shell runs the failsafe. env execs Node: no process in between.
 */
export const HOOK_LAUNCHER = '/usr/bin/env';

/**
 * The environment the hook runs in, as HOOK_LAUNCHER's words, fixed when it is installed: the
 * agent's own is whatever started it (a script's `subprocess.run(…, env=…)`), which could point
 * the hook at a socket it listens on (`LATCH_HOME`, `XDG_RUNTIME_DIR` name the socket), or load
 * code into it (`NODE_OPTIONS`; `NODE_COMPILE_CACHE`, Node 22's cache of compiled code).
 */
export function hookEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  const runtime = env['XDG_RUNTIME_DIR'];
  return [
    ...['NODE_OPTIONS', 'NODE_COMPILE_CACHE', ...(runtime ? [] : ['XDG_RUNTIME_DIR'])].flatMap((name) => [
      '-u',
      name,
    ]),
    `LATCH_HOME=${resolve(latchHome(env))}`,
    ...(runtime ? [`XDG_RUNTIME_DIR=${runtime}`] : []),
  ];
}

/**
 * The command an agent runs for Latch's hook. It needs no PATH: an agent started from a desktop
 * launcher or another shell may not have `latch` on its PATH, and a hook that exits 127 lets the
 * tool run. `--timeout` tells the hook when the agent kills it, so it answers deny before then.
 */
export function hookCommand(agent: Agent, timeoutSeconds: number): string {
  return [
    HOOK_LAUNCHER,
    ...hookEnvironment().map(shellQuote),
    shellQuote(process.execPath),
    shellQuote(latchScriptPath()),
    'hook',
    agent,
    '--timeout',
    String(timeoutSeconds),
    HOOK_FAILSAFE,
  ].join(' ');
}
