import type { Word } from './commandWords.ts';
import { tokensOf, unquoted, wordOf, type Token } from './wordTokens.ts';

/** A part of a path: its name, or a pattern for the names a glob or a computed value could give. */
export type PathSegment = string | RegExp;

export interface PathPattern {
  /** From the root (`/…`), from the folder the command runs in, or from a value computed first. */
  from: 'root' | 'here' | 'computed';
  segments: PathSegment[];
}

/** A segment that is nothing but a computed value: it is not guessed at, and matches no name. */
export const UNKNOWN_SEGMENT = /(?!)/;

/**
 * Whether a segment can be `name` (already in lower case: see protectedPlaces' sameName). A
 * pattern too deep for the engine to run (`*a*a*a…`) may be anything.
 */
export function segmentMatches(segment: PathSegment, name: string): boolean {
  if (typeof segment === 'string') return segment.toLowerCase() === name;
  try {
    return segment.test(name);
  } catch {
    return true;
  }
}

/** A segment that names one thing, not anything (`.lat?h`, `lat?h.cjs`; not `.*` or `*`). */
export const namesOne = (segment: PathSegment) =>
  !['.x', 'x', '.xy-z'].some((name) => segmentMatches(segment, name));

/** A run of a segment: literal text, or regular-expression source for what a glob or value matches. */
type Run = string | { source: string; hidesDot: boolean };
const COMPUTED: Run = { source: '.*', hidesDot: false };

/**
 * The paths a shell word can name. A glob (`*`, `?`, `[…]`) matches within one path
 * segment and, as in the shell, not a leading dot unless spelt (`*` is not `.latch`, `.*` is).
 * A computed value (`$x`, `$(…)`) beside visible text may be any name (`tot$x.json`); a segment
 * that is nothing but computed is not guessed at, and matches no name: only running tells.
 */
export function pathPattern(spelt: Word): PathPattern {
  const word = classesAcrossQuotes(spelt);
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
  return (from === 'root' && throughOwnProcess(segments)) || { from, segments };
}

/** /dev/fd is /proc/self/fd, and /dev/stdin, stdout and stderr its 0, 1 and 2. */
const DEV_STREAMS: Record<string, string> = { stdin: '0', stdout: '1', stderr: '2' };

/**
 * A path through the links /proc gives a process to its own view of the file system
 * (`/proc/self/cwd/…`, `/proc/$$/root/…`, `/dev/fd/../cwd/…`), as the agent's process sees it:
 * its folder's path is `base`, its root `/`. Followed here, in the daemon, they would lead to the
 * daemon's own folder, which is nothing the agent names. A number is another process, whose
 * links resolve the same from here. What the process's other links lead to (its open files) is
 * its own: nothing this can name.
 */
function throughOwnProcess(written: PathSegment[]): PathPattern | undefined {
  let path = written.filter((segment) => segment !== '.' && segment !== '');
  if (path[0] === 'dev' && path[1] === 'fd') path = ['proc', 'self', 'fd', ...path.slice(2)];
  const stream = path[0] === 'dev' && typeof path[1] === 'string' ? DEV_STREAMS[path[1]] : undefined;
  if (stream !== undefined) path = ['proc', 'self', 'fd', stream, ...path.slice(2)];
  const process = path[1];
  const own =
    path[0] === 'proc' &&
    process !== undefined &&
    (process === 'self' || process === 'thread-self' || typeof process !== 'string');
  if (!own) return undefined;
  // `fd/..` is the process's folder again; `cwd/..` and `root/..` lead where those links do.
  while (path.length > 3 && path[3] === '..' && path[2] !== 'cwd' && path[2] !== 'root')
    path = [...path.slice(0, 2), ...path.slice(4)];
  if (path[2] === 'cwd') return { from: 'here', segments: path.slice(3) };
  if (path[2] === 'root') return { from: 'root', segments: path.slice(3) };
  return { from: 'computed', segments: [] };
}

/** More runs than a name of 255 bytes needs: such a pattern is taken to match any name. */
const MOST_RUNS = 512;

function segment(runs: Run[]): PathSegment {
  if (runs.every((run) => typeof run === 'string')) return runs.join('');
  if (runs.every((run) => run === COMPUTED)) return UNKNOWN_SEGMENT;
  if (runs.length > MOST_RUNS) return /^.*$/s;
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
 * stands for any one character, as JavaScript does not read those; one longer than any class
 * need be, for any text up to the last `]`.
 */
function globRuns(text: string): Run[] {
  const runs: Run[] = [];
  const lastClose = text.lastIndexOf(']');
  for (let i = 0; i < text.length; i++) {
    const character = text[i]!;
    if (character === '*' || character === '?') {
      runs.push({ source: character === '*' ? '.*' : '.', hidesDot: true });
      continue;
    }
    const end = character === '[' && lastClose > i + 1 ? classEnd(text, i, lastClose) : undefined;
    if (end === undefined) {
      runs.push(character);
      continue;
    }
    const inside = text.slice(i + 1, end.at);
    runs.push(
      end.long
        ? COMPUTED
        : {
            source: /\[[:=.]/.test(inside)
              ? '.'
              : `[${inside.replace(/^[!^]/, '^').replace(/[\\[]|(?<=^\^?)\]/g, '\\$&')}]`,
            hidesDot: true,
          },
    );
    i = end.at;
  }
  return runs;
}

/** Longer than any bracket expression needs: past it, the scan for its end stops. */
const LONGEST_CLASS = 128;

/**
 * Where the bracket expression opening at `open` closes: a `]` first (after `!` or `^`) is one
 * of its characters, and `[:…:]`, `[=…=]`, `[.….]` are read whole. Looked for within
 * LONGEST_CLASS characters, so that `[[:[[:…` costs one pass; a class that goes on past it is
 * `long`, and taken to end at the word's last `]`.
 */
function classEnd(text: string, open: number, lastClose: number): { at: number; long: boolean } {
  const limit = Math.min(lastClose, open + LONGEST_CLASS);
  let i = open + 1;
  if (text[i] === '!' || text[i] === '^') i++;
  if (text[i] === ']') i++;
  for (; i <= limit; i++) {
    if (text[i] === ']') return { at: i, long: false };
    const kind = text[i + 1];
    if (text[i] === '[' && kind !== undefined && ':=.'.includes(kind)) {
      const close = text.slice(i + 2, limit + 1).indexOf(`${kind}]`);
      if (close >= 0) i += close + 3;
    }
  }
  return { at: lastClose, long: true };
}

/**
 * A bracket expression whose inside is quoted or computed in part (`.la["t"]ch`, `[$c]`) is
 * still one: the shell reads the brackets unquoted and what is between as its characters. It
 * becomes a computed value here, any text, which a per-piece reading would have left as text.
 */
function classesAcrossQuotes(word: Word): Word {
  if (word.length < 2) return word;
  const tokens = tokensOf(word);
  const plain = (token: Token) => 'character' in token && token.glob;
  // One pass from the end for the next unquoted ] after each token, one from the start for how
  // many quoted or computed tokens come before it: each bracket then costs nothing more.
  const nextClose = new Array<number>(tokens.length);
  for (let j = tokens.length - 1, next = -1; j >= 0; j--) {
    nextClose[j] = next;
    if (unquoted(tokens[j], ']')) next = j;
  }
  const notPlainBefore = [0];
  for (const token of tokens) notPlainBefore.push(notPlainBefore.at(-1)! + (plain(token) ? 0 : 1));
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const close = unquoted(tokens[i], '[') ? (nextClose[i + 1] ?? -1) : -1;
    if (close > 0 && notPlainBefore[close]! > notPlainBefore[i + 1]!) {
      out.push({ computed: '[…]' });
      i = close;
    } else out.push(tokens[i]!);
  }
  return wordOf(out);
}
