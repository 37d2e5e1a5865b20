import { statSync } from 'node:fs';
import { literalText, type Word } from './commandWords.ts';
import { pathPattern, segmentMatches, type PathPattern } from './pathPattern.ts';
import { pathTouches, type Touch } from './pathTouches.ts';
import { placesFrom, sameName, type ProtectedPlaces } from './protectedPlaces.ts';
import { asWalked } from './realPath.ts';
import { hasOtherNames, placeByIdentity } from './sameFile.ts';
import type { Guard, Note } from './selfProtection.ts';

/**
 * What the words of a command (or of an unknown tool's input) touch of Latch's as paths, as
 * something that may write: each word from the folder the command runs in, and from every
 * folder it names at, in or above a protected place, since it may `cd` there first
 * (`cd ~ && cat .lat?h/t*`, `cd ~/.latch && cat *`). A word only `lookedAt` (`ls ~/.config`)
 * does not move the folder above a place that it names; one a program acts on `below` (`grep -r
 * x ~`, `rm -r ~`, `git diff . x`) reaches every place below it.
 */
export function wordsTouch(
  words: Word[],
  cwd: string | undefined,
  places: ProtectedPlaces,
  realPath: (path: string) => string,
  note: Note,
  lookedAt: (word: Word) => boolean = () => false,
  below: (word: Word) => boolean = () => false,
): void {
  const patterns = words.map((word): [Word, PathPattern] => [word, pathPattern(word)]);
  // Equivalent mutants (Stryker) below: without a cwd, a relative base or word can only match a
  // place by its tail, as pathTouches does with no base; a computed word has no literal text; an
  // absolute pattern ignores the base it is given.
  // Stryker disable next-line ArrayDeclaration: a relative base matches only by tail, as none does
  const bases = new Set(cwd === undefined ? [] : [cwd, realPath(cwd)]);
  // Each word that is a path as written, from the folder the command runs in.
  const literal = patterns.flatMap(([word, pattern]) => {
    const text = literalText(word);
    // Stryker disable next-line ConditionalExpression,StringLiteral: repeated by literalText and pathTouches
    if (text === undefined || pattern.from === 'computed' || (pattern.from === 'here' && !cwd)) return [];
    // Stryker disable next-line StringLiteral: only an absolute word gets here without a cwd
    return [{ pattern, path: asWalked(cwd ?? '/', text) }];
  });
  for (const { pattern, path } of literal) {
    const folder = realPath(path);
    if (pathTouches(pattern, cwd, places, realPath).length > 0 && isFolder(folder)) bases.add(folder);
  }
  const noteWrites = (touches: Touch[], looked = false, reachesBelow = false) => {
    for (const touch of touches) {
      const guard =
        touch.relation !== 'above'
          ? mayWrite(touch)
          : reachesBelow
            ? mayWrite({ ...touch, movable: true })
            : looked
              ? undefined
              : mayWrite(touch);
      if (guard) note(guard, touch.place.target, touch.place.path);
    }
  };
  // Stryker disable next-line ConditionalExpression: an absolute pattern ignores its base
  const fromBases = (pattern: PathPattern) =>
    pattern.from === 'here' && bases.size > 0 ? [...bases] : [undefined];
  for (const [word, pattern] of patterns)
    for (const base of fromBases(pattern))
      noteWrites(pathTouches(pattern, base, places, realPath), lookedAt(word), below(word));
  intoFolders(patterns, fromBases, places, realPath, noteWrites, lookedAt);
  // A file with other names may be one of Latch's under another (a hard link), which no name shows.
  const linked = literal.flatMap(({ path }) => (hasOtherNames(path) ? [path] : []));
  if (linked.length > 0) {
    const sameFileAs = placeByIdentity(placesFrom(places, cwd));
    noteWrites(linked.flatMap((path) => sameFileAs(path) ?? []));
  }
}

/**
 * What cp, mv, ln or install puts in a folder keeps its last name there, wherever it came from:
 * `cp /tmp/x/.bashrc ~` writes `~/.bashrc`. Only folders that hold a protected place count, and
 * only the names of what they hold (a project's forms are seen in the words themselves), so the
 * work stays in proportion to the command however many folders and files it names.
 */
function intoFolders(
  patterns: [Word, PathPattern][],
  fromBases: (pattern: PathPattern) => (string | undefined)[],
  places: ProtectedPlaces,
  realPath: (path: string) => string,
  noteWrites: (touches: Touch[]) => void,
  lookedAt: (word: Word) => boolean,
): void {
  // Each folder named that holds a place, with the names of its entries on the way to one.
  const held = new Map<string, Set<string>>();
  for (const [word, pattern] of patterns) {
    const text = literalText(word);
    if (text === undefined || pattern.from === 'computed' || lookedAt(word)) continue;
    for (const base of fromBases(pattern)) {
      const folder = realPath(asWalked(base ?? '/', text));
      const parts = folder.split('/').filter(Boolean).map(sameName);
      const names = places.places
        .filter(
          (place) => place.parts.length > parts.length && parts.every((part, i) => place.parts[i] === part),
        )
        .map((place) => place.parts[parts.length]!);
      if (names.length > 0 && !held.has(folder) && isFolder(folder)) held.set(folder, new Set(names));
    }
  }
  if (held.size === 0) return;
  // Each last name once, and each name held once: `cp a/.bashrc b/.bashrc … ~` is one check.
  const lastNames = new Map(
    patterns.flatMap(([, { segments }]) => {
      const last = segments.at(-1);
      return last === undefined ? [] : [[String(last), last] as const];
    }),
  );
  const heldNames = new Set([...held.values()].flatMap((names) => [...names]));
  const written = new Set(
    [...heldNames].filter((name) => [...lastNames.values()].some((last) => segmentMatches(last, name))),
  );
  for (const [folder, names] of held)
    for (const name of names)
      if (written.has(name))
        noteWrites(pathTouches({ from: 'here', segments: [name] }, folder, places, realPath));
}

/** What touching a place means for a call that may write there. */
export function mayWrite({ place, relation, movable }: Touch): Guard | undefined {
  // Above a place, only a folder its owner can move counts: `mv ~/.config x && mv evil ~/.config`.
  if (relation === 'above' && !movable) return undefined;
  if (place.kind === 'secret') return relation === 'above' ? 'files' : 'secrets';
  if (place.kind === 'home' || place.kind === 'socket' || place.kind === 'program') return 'files';
  // A command that names a folder of programs (`ls ~/.local/bin`, `export PATH=…`) is the policy's.
  if (place.kind === 'program-folder') return undefined;
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
