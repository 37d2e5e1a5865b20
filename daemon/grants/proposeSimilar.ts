import { basename } from 'node:path';
import type { SimilarCall } from '../../shared/messages/approvals.ts';
import type { RiskLevel } from '../../shared/messages/common.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';
import { conversationId } from '../gate/conversationId.ts';
import { plainCommandWords } from '../policy/plainCommandWords.ts';

/**
 * Programs whose words are another command to run (`sudo rm …`, `env x=1 sh …`, `xargs rm`),
 * code (`python -c`, `node -e`, `awk`, `sed`'s `e`, `find -exec`), or a script, package or
 * container to run (`npm exec …`, `uv run …`, `go run …`, `docker run -v …`): for them "calls
 * like this" would be any command at all, so only this exact command is proposed.
 */
const RUNS_WHAT_FOLLOWS = new Set([
  ...['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh', 'eval', 'exec', 'command', 'builtin'],
  ...['env', 'sudo', 'doas', 'su', 'runuser', 'xargs', 'nohup', 'time', 'timeout', 'nice', 'ionice'],
  ...['stdbuf', 'setsid', 'chroot', 'watch', 'strace', 'ltrace', 'parallel', 'ssh', 'find'],
  ...['python', 'python3', 'node', 'deno', 'bun', 'perl', 'ruby', 'php', 'awk', 'gawk', 'sed', 'lua'],
  // Runners and build tools, whose subcommand runs a script, a package or a container named next.
  ...['npx', 'npm', 'pnpm', 'yarn', 'bunx', 'uv', 'uvx', 'pipx', 'poetry', 'pip', 'pip3', 'go', 'cargo'],
  ...['docker', 'podman', 'kubectl', 'make', 'just', 'task', 'gradle', 'mvn', 'rake', 'bundle', 'dotnet'],
]);

/** As many words as a rule holds (similarCallSchema). */
const MAX_WORDS = 32;

/** A subcommand: `push`, `run`, `compose`; never an option, a path or an assignment. */
const SUBCOMMAND = /^[a-z][a-z0-9-]*$/;

/**
 * A name a grant lets vary: a branch, a remote, a file in this folder (`feature/x`, `origin`,
 * `notes.md`). Never an option (`-f`, `--mirror`), a URL or refspec (`https://…`, `:main`,
 * `+main`), an absolute path, or a way out of the folder (`..`).
 */
const ANY_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

export const isAnyName = (word: string): boolean => ANY_NAME.test(word) && !word.includes('..');

/**
 * The narrow rule an approval of this call may also grant (docs/policy.md#grants): the same tool
 * in the same folder, the same words in the same order, only while `policyRule` is what asks.
 * Where the program has a subcommand (`git push`) and the call ends in a name after it, that last
 * word may be any name (`git push origin ‹name›`); every other word, every option included, stays
 * as approved. None for a call without a command written in plain words or without a folder, for
 * a critical one, or for one Latch guards for itself (`guarded`): those are asked each time.
 */
export function proposeSimilar(
  call: { tool: string; command?: string; cwd?: string; session?: string },
  asked: { policyRule: string; risk: RiskLevel; guarded: boolean },
): SimilarCall | undefined {
  const { policyRule, risk, guarded } = asked;
  if (guarded || risk === 'critical' || call.command === undefined || !call.cwd) return undefined;
  // The phone shows the folder and words as they are: any that cleaning or its caps would change, none.
  if (
    sanitizeText(call.cwd, { maxBytes: LIMITS.cwdBytes, multiline: false }).changed ||
    sanitizeText(call.tool, { maxBytes: LIMITS.nameBytes, multiline: false }).changed ||
    sanitizeText(policyRule, { maxBytes: LIMITS.nameBytes, multiline: false }).changed
  )
    return undefined;
  const words = plainCommandWords(call.command);
  if (!words || words.length > MAX_WORDS || words.some((word) => word.length > LIMITS.nameBytes))
    return undefined;
  const [program, subcommand] = words;
  const conversation = call.session ? { conversation: conversationId(call.session) } : {};
  const thenAnyName =
    words.length > 2 &&
    SUBCOMMAND.test(subcommand!) &&
    !RUNS_WHAT_FOLLOWS.has(basename(program!)) &&
    isAnyName(words.at(-1)!);
  return {
    tool: call.tool,
    words: thenAnyName ? words.slice(0, -1) : words,
    thenAnyName,
    folder: call.cwd,
    policyRule,
    ...conversation,
  };
}
