import type { Word } from './commandWords.ts';
import { tokensOf, unquoted, wordOf, type Token } from './wordTokens.ts';

/** More words than this from one word, and its braces are taken as "could be anything". */
const MOST_WORDS = 64;
/** More braces expanded than this in one word (`{a..a}` many times over), and the same. */
const MOST_EXPANSIONS = 256;

/**
 * The words a shell makes of one word by brace expansion, before any other reading of it:
 * `~/.la{tch,x}/t*` is `~/.latch/t*` and `~/.lax/t*`, `host-ke{y..y}.json` is `host-key.json`,
 * a list may span slashes, and its choices may be quoted (`{"tch",x}`). Only unquoted braces
 * and commas count; a brace with neither a comma nor a sequence inside (`{a}`) is text. Past
 * MOST_WORDS or MOST_EXPANSIONS, each unquoted brace of the word stands for any text at all.
 */
export function expandBraces(word: Word): Word[] {
  if (!word.some((piece) => 'text' in piece && piece.glob && piece.text.includes('{'))) return [word];
  let words = [tokensOf(word)];
  for (let expansions = 0; ; expansions++) {
    const next: Token[][] = [];
    let expanded = false;
    for (const tokens of words) {
      const brace = firstBrace(tokens);
      if (!brace || brace.choices === 'too many') {
        if (brace) return [withBracesComputed(word)];
        next.push(tokens);
        continue;
      }
      expanded = true;
      for (const choice of brace.choices)
        next.push([...tokens.slice(0, brace.open), ...choice, ...tokens.slice(brace.close + 1)]);
    }
    if (next.length > MOST_WORDS || expansions > MOST_EXPANSIONS) return [withBracesComputed(word)];
    words = next;
    if (!expanded) return words.map(wordOf);
  }
}

/** The first outermost brace that expands, with its choices. */
function firstBrace(
  tokens: Token[],
): { open: number; close: number; choices: Token[][] | 'too many' } | undefined {
  const opens: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (unquoted(tokens[i], '{')) opens.push(i);
    else if (unquoted(tokens[i], '}') && opens.length > 0) {
      const open = opens.pop()!;
      // An inner brace expands when its outer one's choices are read again.
      if (opens.length > 0) continue;
      const choices = braceChoices(tokens.slice(open + 1, i));
      if (choices) return { open, close: i, choices };
    }
  }
  return undefined;
}

/** `a,b{c,d}`: its top-level choices; `x..y[..step]`: the sequence; anything else is no brace. */
function braceChoices(inside: Token[]): Token[][] | 'too many' | undefined {
  const choices: Token[][] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inside.length; i++) {
    if (unquoted(inside[i], '{')) depth++;
    else if (unquoted(inside[i], '}')) depth--;
    else if (unquoted(inside[i], ',') && depth === 0) {
      choices.push(inside.slice(start, i));
      start = i + 1;
    }
  }
  if (choices.length > 0) return [...choices, inside.slice(start)];
  // A sequence is spelt unquoted, all of it.
  if (!inside.every((token) => 'character' in token && token.glob)) return undefined;
  const values = sequence(inside.map((token) => (token as { character: string }).character).join(''));
  return values === 'too many' || values === undefined
    ? values
    : values.map((value) => [...value].map((character) => ({ character, glob: true })));
}

/** `{1..10}`, `{01..9..2}`, `{a..e}`, counted as the shell counts them. */
function sequence(inside: string): string[] | 'too many' | undefined {
  const numbers = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(inside);
  const letters = /^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/.exec(inside);
  const match = numbers ?? letters;
  if (!match) return undefined;
  const [from, to] = [match[1]!, match[2]!].map((end) => (numbers ? Number(end) : end.charCodeAt(0))) as [
    number,
    number,
  ];
  const step = Math.abs(Number(match[3] ?? 1)) || 1;
  if (!(Math.abs(to - from) / step < MOST_WORDS)) return 'too many';
  // A leading zero pads every number to that width (`{01..10}`).
  const width = numbers && /^-?0\d/.test(match[1]!) ? match[1]!.replace('-', '').length : 0;
  const values: string[] = [];
  const direction = from <= to ? 1 : -1;
  for (let value = from; (to - value) * direction >= 0; value += step * direction)
    values.push(numbers ? String(value).padStart(width, '0') : String.fromCharCode(value));
  return values;
}

/** The word with every unquoted brace, and what stands between braces, computed: any text. */
function withBracesComputed(word: Word): Word {
  const tokens = tokensOf(word);
  const braces = tokens.flatMap((token, i) => (unquoted(token, '{') || unquoted(token, '}') ? [i] : []));
  const [first, last] = [braces[0]!, braces.at(-1)!];
  return wordOf([...tokens.slice(0, first), { computed: '{…}' }, ...tokens.slice(last + 1)]);
}
