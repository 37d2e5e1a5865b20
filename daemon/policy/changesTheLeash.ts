import { literalText, type SimpleCommand, type Word } from './commandWords.ts';
import { namesOne, pathPattern, segmentMatches } from './pathPattern.ts';

/**
 * `latch` subcommands that change what gates the agent: its keys, its phones, its hooks, its
 * daemon, its relay (`relay deploy` rewrites Latch's relay settings and hands the relay's keys to
 * the wrangler it runs, which `--wrangler` or `$LATCH_WRANGLER` may name).
 */
const LEASH = new Set(['init', 'pair', 'install', 'uninstall', 'daemon', 'relay']);

/**
 * Latch's command line however it is started: `latch`, `npx latch@1`, `…/bin/latch.cjs`, or a
 * bundle in a folder named latch (`node dist/latch/main.mjs`); spelt as a glob too
 * (`…/lat?h.cjs`), which the shell expands to the file that is there.
 */
const isLatch = (word: Word) => {
  const segment = pathPattern(word).segments.at(-1);
  const names = (name: string) => segment !== undefined && namesOne(segment) && segmentMatches(segment, name);
  const text = literalText(word);
  return (
    ['latch', 'latch.cjs', 'latch.js', 'latch.mjs'].some(names) ||
    (text !== undefined &&
      (/^latch@[^/]*$/i.test(text.split('/').at(-1)!) || /(^|\/)latch\/[^/]+\.[cm]?js$/i.test(text)))
  );
};

/**
 * The `latch` subcommand in a command that changes the leash (`init`, `pair`, `install`,
 * `uninstall`, `daemon`, `relay`, `devices --revoke`), or `latch …` when the subcommand is computed.
 * The rest (`status`, `doctor`, `audit verify`, `hosts`, `devices`, `panic`, `request`, `exec`,
 * `mcp`, `hook`) stays with the policy. A mention counts: `git commit -m "run latch pair"` asks too.
 */
export function changesTheLeash(command: SimpleCommand): string | undefined {
  const texts = command.map(literalText);
  // Whether --revoke comes at or after each word: one pass from the end.
  const revokes = new Array<boolean>(texts.length + 1).fill(false);
  for (let i = texts.length - 1; i >= 0; i--)
    revokes[i] = revokes[i + 1]! || texts[i] === undefined || /^--revoke(=|$)/.test(texts[i]!);
  for (let i = 0; i < texts.length; i++) {
    if (!isLatch(command[i]!)) continue;
    // Its subcommand is the first word after it that is no option.
    let at = i + 1;
    while (texts[at]?.startsWith('-')) at++;
    if (at >= texts.length) continue;
    const subcommand = texts[at]?.toLowerCase();
    if (subcommand === undefined) return 'latch …';
    if (LEASH.has(subcommand)) return `latch ${subcommand}`;
    if (subcommand === 'devices' && revokes[at + 1]) return 'latch devices --revoke';
  }
  return undefined;
}
