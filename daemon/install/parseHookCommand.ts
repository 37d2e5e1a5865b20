import { basename } from 'node:path';
import { escapeRegExp } from '../../shared/text/escapeRegExp.ts';
import { AGENTS, type Agent } from './agents.ts';
import { HOOK_FAILSAFE, HOOK_LAUNCHER } from './hookCommand.ts';
import { splitShellWords } from './shellWords.ts';

/** A hook command that runs Latch's hook, read into its parts. */
export interface LatchHookCommand {
  /** What the hook answers as: `hook claude-code` or `hook codex`. */
  agent: Agent;
  /** The words before the program that set its environment: env's `-u NAME`, and `NAME=value`. */
  environment: string[];
  /** The words before `hook` after those: the executable, and the script it runs (`node …/latch.cjs`). */
  program: string[];
  /** Whether it starts through HOOK_LAUNCHER, which exits 127 itself where Node is gone. */
  launched: boolean;
  /** Its `--timeout`, if it has one. */
  timeoutSeconds?: number;
  /** False when the command holds shell syntax (beyond the failsafe), so that its words are not all it runs. */
  plain: boolean;
  /** Whether it ends in HOOK_FAILSAFE, so that a hook that dies without answering still blocks. */
  failsafe: boolean;
}

const LATCH = /^latch(\.cjs)?$/;
/**
 * A failsafe at the end of a command, however it is spaced: HOOK_FAILSAFE (hookCommand.ts), or
 * the `|| exit 2` of earlier installs, which Codex does not take as a block (no reason on stderr)
 * and so does not count as one.
 */
const FAILSAFE_AT_END = new RegExp(`[ \\t]+${escapeRegExp(HOOK_FAILSAFE).replace(/ /g, '[ \\t]+')}[ \\t]*$`);
const EARLIER_FAILSAFE_AT_END = /[ \t]+\|\|[ \t]*exit[ \t]+2[ \t]*$/;

/**
 * Recognises Latch's hook in an agent's settings however it was written: `latch hook codex`,
 * `/usr/bin/env '/usr/bin/node' '/…/daemon/bin/latch.cjs' hook claude-code --timeout 615` (or
 * without env, as earlier installs wrote it), `npx latch hook claude-code`, each with or without
 * the failsafe. Anything else is another tool's hook, and
 * undefined.
 */
export function parseHookCommand(command: string): LatchHookCommand | undefined {
  const failsafe = FAILSAFE_AT_END.test(command);
  // Spaces and tabs only: a line break before `||` starts another command, which the shell runs
  // apart (or refuses). One form is taken off, once: what is left must be the hook alone.
  const { words, plain } = splitShellWords(
    failsafe ? command.replace(FAILSAFE_AT_END, '') : command.replace(EARLIER_FAILSAFE_AT_END, ''),
  );
  const at = words.findIndex(
    (word, index) =>
      word === 'hook' &&
      index > 0 &&
      LATCH.test(basename(words[index - 1]!)) &&
      (AGENTS as readonly string[]).includes(words[index + 1] ?? ''),
  );
  if (at < 0) return undefined;
  // `--timeout N`, the one form the hook reads.
  const flag = words.indexOf('--timeout', at + 2);
  const value = flag < 0 ? undefined : words[flag + 1];
  const timeoutSeconds = value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
  const launched = words[0] === HOOK_LAUNCHER;
  let start = launched ? 1 : 0;
  for (;;) {
    if (launched && words[start] === '-u' && start + 2 < at) start += 2;
    else if (/^[A-Za-z_]\w*=/.test(words[start]!) && start + 1 < at) start += 1;
    else break;
  }
  return {
    agent: words[at + 1] as Agent,
    environment: words.slice(launched ? 1 : 0, start),
    program: words.slice(start, at),
    launched,
    plain,
    failsafe,
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
  };
}
