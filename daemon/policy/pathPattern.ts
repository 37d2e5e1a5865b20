import type { Word } from './commandWords.ts';

/** A part of a path: its name, or a pattern for the names a glob or a computed value could give. */
export type PathSegment = string | RegExp;

export interface PathPattern {
  /** From the root (`/…`), from the folder the command runs in, or from a value computed first. */
  from: 'root' | 'here' | 'computed';
  segments: PathSegment[];
}

/** A run of a segment: literal text, or regular-expression source for what a glob or value matches. */
type Run = string | { source: string; hidesDot: boolean };
const COMPUTED: Run = { source: '.*', hidesDot: false };

/**
 * The paths a shell word can name. A glob (`*`, `?`, `[…]`, `{a,b}`) matches within one path
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
      if (part) for (const run of piece.glob ? globRuns(part, true) : [part]) runs.push(run);
    });
  }
  endSegment();
  return { from, segments };
}

function segment(runs: Run[]): PathSegment {
  if (runs.every((run) => typeof run === 'string')) return runs.join('');
  if (runs.every((run) => run === COMPUTED)) return /(?!)/;
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
 * The runs of unquoted text within one segment. Braces are read one level deep; a `[` or `{`
 * with no close is a character. Each close is searched once, so a long word costs one pass.
 */
function globRuns(text: string, braces: boolean): Run[] {
  const runs: Run[] = [];
  const lastBracket = text.lastIndexOf(']');
  const closes = braces ? braceCloses(text) : new Map<number, number>();
  for (let i = 0; i < text.length; i++) {
    const character = text[i]!;
    if (character === '*' || character === '?') {
      runs.push({ source: character === '*' ? '.*' : '.', hidesDot: true });
      continue;
    }
    // A ] first in the class is one of its characters: []a] is ] or a.
    if (character === '[' && lastBracket >= i + 2) {
      const end = text.indexOf(']', i + 2);
      const inside = text
        .slice(i + 1, end)
        .replace(/^[!^]/, '^')
        .replace(/[\\[]|(?<=^\^?)\]/g, '\\$&');
      runs.push({ source: `[${inside}]`, hidesDot: true });
      i = end;
      continue;
    }
    const close = closes.get(i);
    if (close !== undefined) {
      const choices = topLevelChoices(text.slice(i + 1, close));
      // {a} with no comma is no expansion: the text as it is, braces and all.
      runs.push(
        choices.length > 1
          ? {
              source: `(?:${choices.map((choice) => sourceOf(globRuns(choice, false))).join('|')})`,
              hidesDot: false,
            }
          : text.slice(i, close + 1),
      );
      i = close;
      continue;
    }
    runs.push(character);
  }
  return runs;
}

/** Where each `{` closes, in one pass. */
function braceCloses(text: string): Map<number, number> {
  const closes = new Map<number, number>();
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '{') open.push(i);
    else if (text[i] === '}' && open.length > 0) closes.set(open.pop()!, i);
  }
  return closes;
}

/** The comma-separated choices of a brace expansion's inside, nested braces kept whole. */
function topLevelChoices(inside: string): string[] {
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
  return [...choices, inside.slice(start)];
}
