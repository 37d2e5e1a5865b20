import type { Piece, Word } from './commandWords.ts';

/** More words than this from one word, and its braces are taken as "could be anything". */
const MOST_WORDS = 64;

/** A brace's choices, or more of them than MOST_WORDS. */
type Choices = string[] | 'too many';

/**
 * The words a shell makes of one word by brace expansion, before any other reading of it:
 * `~/.la{tch,x}/t*` is `~/.latch/t*` and `~/.lax/t*`, `host-ke{y..y}.json` is `host-key.json`,
 * and a list may span slashes. Only unquoted braces expand (quoted ones are text); a brace with
 * neither a comma nor a sequence inside (`{a}`) is text too. Past MOST_WORDS, the braces of the
 * word stand for a computed value: any text at all.
 */
export function expandBraces(word: Word): Word[] {
  return expand(word, MOST_WORDS) ?? [withBracesComputed(word)];
}

/** The expansions of `word`, or undefined when there would be more than `most`. */
function expand(word: Word, most: number): Word[] | undefined {
  const found = firstBrace(word);
  if (!found) return most >= 1 ? [word] : undefined;
  const { piece, open, close, choices } = found;
  if (choices === 'too many') return undefined;
  const text = (word[piece] as { text: string }).text;
  const words: Word[] = [];
  for (const choice of choices) {
    const next = joined([
      ...word.slice(0, piece),
      { text: text.slice(0, open) + choice + text.slice(close + 1), glob: true },
      ...word.slice(piece + 1),
    ]);
    const expanded = expand(next, most - words.length);
    if (!expanded) return undefined;
    words.push(...expanded);
  }
  return words;
}

/** The first outermost brace that expands, in the word's unquoted pieces, with its choices. */
function firstBrace(
  word: Word,
): { piece: number; open: number; close: number; choices: Choices } | undefined {
  for (const [piece, part] of word.entries()) {
    if (!('text' in part) || !part.glob) continue;
    const opens: number[] = [];
    for (let i = 0; i < part.text.length; i++) {
      if (part.text[i] === '{') opens.push(i);
      else if (part.text[i] === '}' && opens.length > 0) {
        const open = opens.pop()!;
        // An inner brace expands when its outer one's choices are read again.
        if (opens.length > 0) continue;
        const choices = braceChoices(part.text.slice(open + 1, i));
        if (choices) return { piece, open, close: i, choices };
      }
    }
  }
  return undefined;
}

/** `a,b{c,d}`: its top-level choices; `x..y[..step]`: the sequence; anything else is no brace. */
function braceChoices(inside: string): Choices | undefined {
  const choices: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inside.length; i++) {
    if (inside[i] === '{') depth++;
    else if (inside[i] === '}') depth--;
    else if (inside[i] === ',' && depth === 0) {
      choices.push(inside.slice(start, i));
      start = i + 1;
    }
  }
  return choices.length > 0 ? [...choices, inside.slice(start)] : sequence(inside);
}

/** `{1..10}`, `{01..9..2}`, `{a..e}`, counted as the shell counts them. */
function sequence(inside: string): Choices | undefined {
  const numbers = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(inside);
  const letters = /^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/.exec(inside);
  const match = numbers ?? letters;
  if (!match) return undefined;
  const [from, to] = [match[1]!, match[2]!].map((end) => (numbers ? Number(end) : end.charCodeAt(0))) as [
    number,
    number,
  ];
  const step = Math.abs(Number(match[3] ?? 1)) || 1;
  if (Math.abs(to - from) / step >= MOST_WORDS) return 'too many';
  // A leading zero pads every number to that width (`{01..10}`).
  const width = numbers && /^-?0\d/.test(match[1]!) ? match[1]!.replace('-', '').length : 0;
  const values: string[] = [];
  const direction = from <= to ? 1 : -1;
  for (let value = from; (to - value) * direction >= 0; value += step * direction)
    values.push(numbers ? String(value).padStart(width, '0') : String.fromCharCode(value));
  return values;
}

/** Adjacent unquoted texts as one piece, as the lexer makes them. */
function joined(word: Word): Word {
  const pieces: Piece[] = [];
  for (const piece of word) {
    const last = pieces.at(-1);
    if ('text' in piece && last && 'text' in last && last.glob === piece.glob)
      pieces[pieces.length - 1] = { text: last.text + piece.text, glob: piece.glob };
    else if (!('text' in piece) || piece.text !== '') pieces.push(piece);
  }
  return pieces;
}

/** The word with the text from the first unquoted `{` to the last `}` of each piece computed. */
function withBracesComputed(word: Word): Word {
  return joined(
    word.flatMap((piece): Piece[] => {
      if (!('text' in piece) || !piece.glob) return [piece];
      const open = piece.text.indexOf('{');
      const close = piece.text.lastIndexOf('}');
      if (open < 0 || close < open) return [piece];
      return [
        { text: piece.text.slice(0, open), glob: true },
        { computed: '{…}' },
        { text: piece.text.slice(close + 1), glob: true },
      ];
    }),
  );
}
