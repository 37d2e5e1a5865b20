import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { literalText, type Word } from './commandWords.ts';
import { pathPattern, type PathPattern } from './pathPattern.ts';
import { pathTouches, type Touch } from './pathTouches.ts';
import type { ProtectedPlaces } from './protectedPlaces.ts';
import type { Guard, Note } from './selfProtection.ts';

/**
 * What the words of a command (or of an unknown tool's input) touch of Latch's as paths, as
 * something that may write: each word from the folder the command runs in, and from every
 * folder it names at, in or above a protected place, since it may `cd` there first
 * (`cd ~ && cat .lat?h/t*`, `cd ~/.latch && cat *`).
 */
export function wordsTouch(
  words: Word[],
  cwd: string | undefined,
  places: ProtectedPlaces,
  realPath: (path: string) => string,
  note: Note,
): void {
  const patterns = words.map((word): [Word, PathPattern] => [word, pathPattern(word)]);
  // Equivalent mutants (Stryker) below: without a cwd, a relative base or word can only match a
  // place by its tail, as pathTouches does with no base; a computed word has no literal text; an
  // absolute pattern ignores the base it is given.
  // Stryker disable next-line ArrayDeclaration: a relative base matches only by tail, as none does
  const bases = new Set(cwd === undefined ? [] : [cwd, realPath(cwd)]);
  for (const [word, pattern] of patterns) {
    const text = literalText(word);
    // Stryker disable next-line ConditionalExpression,StringLiteral: repeated by literalText and pathTouches
    if (text === undefined || pattern.from === 'computed' || (pattern.from === 'here' && !cwd)) continue;
    // Stryker disable next-line StringLiteral: only an absolute word gets here without a cwd
    const folder = realPath(resolve(cwd ?? '/', text));
    if (pathTouches(pattern, cwd, places, realPath).length > 0 && isFolder(folder)) bases.add(folder);
  }
  const noteWrites = (touches: Touch[]) => {
    for (const touch of touches) {
      const guard = mayWrite(touch);
      if (guard) note(guard, touch.place.target);
    }
  };
  // Stryker disable next-line ConditionalExpression: an absolute pattern ignores its base
  const fromBases = (pattern: PathPattern) =>
    pattern.from === 'here' && bases.size > 0 ? [...bases] : [undefined];
  // The folders the words name: what cp, mv, ln or install puts in one keeps its last name there,
  // wherever it came from (`cp /tmp/x/.bashrc ~`, `mv "$T"/.mcp.json .`).
  const folders = new Set<string>();
  for (const [word, pattern] of patterns) {
    const text = literalText(word);
    if (text === undefined || pattern.from === 'computed') continue;
    for (const base of fromBases(pattern)) {
      const folder = realPath(resolve(base ?? '/', text));
      if (isFolder(folder)) folders.add(folder);
    }
  }
  for (const [, pattern] of patterns) {
    for (const base of fromBases(pattern)) noteWrites(pathTouches(pattern, base, places, realPath));
    const last = pattern.segments.at(-1);
    if (last === undefined) continue;
    for (const folder of folders)
      noteWrites(pathTouches({ from: 'here', segments: [last] }, folder, places, realPath));
  }
}

/** What touching a place means for a call that may write there. */
export function mayWrite({ place, relation, movable }: Touch): Guard | undefined {
  // Above a place, only a folder its owner can move counts: `mv ~/.config x && mv evil ~/.config`.
  if (relation === 'above' && !movable) return undefined;
  if (place.kind === 'secret') return relation === 'above' ? 'files' : 'secrets';
  if (place.kind === 'home' || place.kind === 'socket' || place.kind === 'program') return 'files';
  // An agent's folder is guarded whole, and what is in it: moved away, its hooks go with it; its
  // plugins, subagents and skills add hooks, and its hook scripts run on every call, outside any
  // gate. (Inside a project's folder is seen only for a file tool's path: see pathTouches.)
  return 'hooks';
}

// Stryker disable BlockStatement: undefined reads as "no folder", as false does
function isFolder(path: string): boolean {
  try {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral,OptionalChaining: a throw is "no folder" too
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false; // a file where a folder should be, a name too long: no folder
  }
}
// Stryker restore BlockStatement
