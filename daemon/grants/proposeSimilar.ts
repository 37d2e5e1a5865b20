import { basename } from 'node:path';
import type { SimilarCall } from '../../shared/messages/approvals.ts';
import type { RiskLevel } from '../../shared/messages/common.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';
import { conversationId } from '../gate/conversationId.ts';
import { plainCommandWords } from '../policy/plainCommandWords.ts';

/** As many words as a rule holds (similarCallSchema). */
const MAX_WORDS = 32;

/**
 * Where a grant may let the last word vary: `git` subcommands whose last word names a branch,
 * tag or commit, with the fewest words a call needs for it (`git push origin feature/x`: the
 * remote stays fixed, the branch varies). Anywhere else a name can change what runs (a script, a
 * package, a file to overwrite, a second subcommand as in `gh auth token`), so the grant is the
 * exact command. An allowlist: a program it does not name, however spelled, gets no ‹name›.
 */
const NAME_VARIES_AFTER: ReadonlyMap<string, number> = new Map([
  ['git push', 4],
  ['git fetch', 4],
  ['git pull', 4],
  ['git switch', 3],
  ['git merge', 3],
  ['git log', 3],
  ['git show', 3],
  ['git diff', 3],
]);

/**
 * A name a grant lets vary: a branch, tag or commit (`feature/x`, `v1.2`, `a1b2c3d`). Each part
 * between slashes starts with a letter or digit; never an option (`-f`, `--mirror`), a URL or
 * refspec (`https://…`, `:main`, `+main`, `a:b`), an absolute or hidden path, or `..`.
 */
const ANY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

export const isAnyName = (word: string): boolean => ANY_NAME.test(word) && !word.includes('..');

/**
 * The narrow rule an approval of this call may also grant (docs/policy.md#grants): the same tool
 * in the same folder, the same words in the same order, only while `policyRule` is what asks.
 * For the few subcommands of NAME_VARIES_AFTER, at less than high risk, the last word may be any
 * name (`git push origin ‹name›`); every other word, every option included, stays as approved.
 * None for a call without a command written in plain words or without a folder, for a critical
 * one, or for one Latch guards for itself (`guarded`): those are asked each time.
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
  const fewestWords = NAME_VARIES_AFTER.get(`${basename(program!)} ${subcommand}`);
  // A call the policy finds high risk keeps its target: `git push -f origin ‹name›` is any branch.
  const thenAnyName =
    risk !== 'high' && fewestWords !== undefined && words.length >= fewestWords && isAnyName(words.at(-1)!);
  return {
    tool: call.tool,
    words: thenAnyName ? words.slice(0, -1) : words,
    thenAnyName,
    folder: call.cwd,
    policyRule,
    ...conversation,
  };
}
