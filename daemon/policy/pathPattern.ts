import type { Word } from './commandWords.ts';

/** A part of a path: its name, or a pattern for the names a glob or a computed value could give. */
export type PathSegment = string | RegExp;

export interface PathPattern {
  /** From the root (`/…`), from the folder the command runs in, or from a value computed first. */
  from: 'root' | 'here' | 'computed';
  segments: PathSegment[];
}

/** A segment that is nothing but a computed value: it is not guessed at, and matches no name. */
export const UNKNOWN_SEGMENT = /(?!)/;

/** A segment that names one thing, not anything (`.lat?h`, `lat?h.cjs`; not `.*` or `*`). */
export const namesOne = (segment: PathSegment) =>
  typeof segment === 'string' || !['.x', 'x', '.xy-z'].some((name) => segment.test(name));

/** A run of a segment: literal text, or regular-expression source for what a glob or value matches. */
type Run = string | { source: string; hidesDot: boolean };
const COMPUTED: Run = { source: '.*', hidesDot: false };

/**
 * The paths a shell word can name. A glob (`*`, `?`, `[…]`) matches within one path
 * segment and, as in the shell, not a leading dot unless spelt (`*` is not `.latch`, `.*` is).
 * A computed value (`$x`, `$(…)`) beside visible text may be any name (`tot$x.json`); a segment
 * that is nothing but computed is not guessed at, and matches no name: only running tells.
 */
export function pathPattern(word: Word): PathPattern {
  const first = word[0];
  const from =
    first === undefined || 'computed' in first ? 'computed' : first.text.startsWith('/') ? 'root' : 'here';
  const segments: PathSegment[] = [];
  let runs: Run[] = [];
  const endSegment = () => {
    if (runs.length > 0) segments.push(segment(runs));
    runs = [];
  };
  for (const piece of word) {
    if ('computed' in piece) {
      runs.push(COMPUTED);
      continue;
    }
    piece.text.split('/').forEach((part, index) => {
      if (index > 0) endSegment();
      if (part) for (const run of piece.glob ? globRuns(part) : [part]) runs.push(run);
    });
  }
  endSegment();
  return { from, segments };
}

function segment(runs: Run[]): PathSegment {
  if (runs.every((run) => typeof run === 'string')) return runs.join('');
  if (runs.every((run) => run === COMPUTED)) return UNKNOWN_SEGMENT;
  const first = runs[0]!;
  const source = `^${typeof first !== 'string' && first.hidesDot ? '(?!\\.)' : ''}${sourceOf(runs)}$`;
  try {
    return new RegExp(source, 'is');
  } catch {
    return /^.*$/s; // a class the shell reads and JavaScript does not ([z-a]): it may match anything
  }
}

const sourceOf = (runs: Run[]) =>
  runs
    .map((run) => (typeof run === 'string' ? run.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') : run.source))
    .join('');

/**
 * The runs of unquoted text within one segment (braces were expanded before: commandWords). A
 * `[` with no close is a character. A class holding a POSIX class (`[[:alpha:]]`, `[[=a=]]`)
 * stands for any one character: JavaScript does not read those.
 */
function globRuns(text: string): Run[] {
  const runs: Run[] = [];
  for (let i = 0; i < text.length; i++) {
    const character = text[i]!;
    if (character === '*' || character === '?') {
      runs.push({ source: character === '*' ? '.*' : '.', hidesDot: true });
      continue;
    }
    const end = character === '[' ? classEnd(text, i) : undefined;
    if (end !== undefined) {
      const inside = text.slice(i + 1, end);
      runs.push({
        source: /\[[:=.]/.test(inside)
          ? '.'
          : `[${inside.replace(/^[!^]/, '^').replace(/[\\[]|(?<=^\^?)\]/g, '\\$&')}]`,
        hidesDot: true,
      });
      i = end;
      continue;
    }
    runs.push(character);
  }
  return runs;
}

/**
 * Where the bracket expression opening at `open` closes, or undefined when it does not: a `]`
 * first (after `!` or `^`) is one of its characters, and `[:…:]`, `[=…=]`, `[.….]` are read whole.
 */
function classEnd(text: string, open: number): number | undefined {
  let i = open + 1;
  if (text[i] === '!' || text[i] === '^') i++;
  if (text[i] === ']') i++;
  for (; i < text.length; i++) {
    if (text[i] === ']') return i;
    const kind = text[i + 1];
    if (text[i] === '[' && kind !== undefined && ':=.'.includes(kind)) {
      const close = text.indexOf(`${kind}]`, i + 2);
      if (close >= 0) i = close + 1;
    }
  }
  return undefined;
}
