import { commandWords, literalText } from './commandWords.ts';
import { scanSimpleCommand } from './scanSimpleCommand.ts';

/**
 * The words of `command` when it is one simple command written only in plain words, each
 * separated by one space, so that the text the policy reads is exactly what runs: no quotes,
 * escapes, variables, globs, `~`, redirections or separators. Undefined otherwise. A grant
 * (docs/policy.md#grants) compares only such commands, so a "similar" call cannot hide a second
 * command (`git push; rm -rf /`) or an option behind a quote (`git push '--force'`).
 */
export function plainCommandWords(command: string): string[] | undefined {
  // Defence in depth: for plain words, the scan, the one-command check and the `undefined` check
  // repeat what the plain-word pattern and the final comparison already refuse (equivalent mutants).
  // Stryker disable next-line ConditionalExpression: repeated by the checks below
  if (!scanSimpleCommand(command).simple) return undefined;
  // A simple command is one command to commandWords too (its last: quoted text it reads again
  // comes first); a plain one has no quoted text, so it is the only one.
  const commands = commandWords(command, {});
  // Stryker disable next-line ConditionalExpression: a second command fails the final comparison
  if (commands.length !== 1) return undefined;
  const words = commands[0]!.map(literalText);
  // Characters of a plain word: nothing a shell would quote, expand, glob or split on, and no
  // redirection or separator. What a plain word says is what the program gets. (A literal here,
  // not a module constant, so that mutation testing sees the tests that reach it.)
  const plainWord = /^[A-Za-z0-9._@%+=:,/-]+$/;
  // Stryker disable next-line ConditionalExpression: an undefined word fails the final comparison
  if (!words.every((word): word is string => word !== undefined && plainWord.test(word))) return undefined;
  return words.join(' ') === command ? words : undefined;
}
