import { statSync } from 'node:fs';
import { literalText, type SimpleCommand, type Word } from './commandWords.ts';
import { pathPattern } from './pathPattern.ts';
import { pathTouches } from './pathTouches.ts';
import { placesFrom, type ProtectedPlaces } from './protectedPlaces.ts';
import { asWalked } from './realPath.ts';
import { placeByIdentity } from './sameFile.ts';

/**
 * Programs that take their words as files, and search for none by name: a word of theirs that is
 * a plain path names the one file it spells (`ls data/state.db`), where `locate tch/state.db` or
 * `find -name state.db` would find Latch's.
 */
const TAKES_FILES = new Set([
  ...['ls', 'stat', 'file', 'du', 'wc', 'cat', 'head', 'tail', 'less', 'more', 'bat', 'touch', 'rm'],
  ...['cp', 'mv', 'sqlite3', 'git', 'md5sum', 'sha1sum', 'sha256sum', 'shasum', 'cksum', 'diff', 'cmp'],
  ...['xxd', 'od', 'hexdump', 'strings', 'realpath', 'readlink', 'chmod'],
]);
/** Commands that move the shell to another folder. */
const MOVES = new Set(['cd', 'pushd', 'popd']);
/** A plain path as a shell leaves it: no `~`, `$`, `=`, `:`, quote, space or glob left to read. */
const PLAIN = /^[A-Za-z0-9._/+@%,-]+$/;
/** Past these, the folders and words are more than are read for this: the name counts. */
const MOST_WORDS = 64;
const MOST_FOLDERS = 8;

/**
 * Which words of a command plainly name a file outside Latch's home, for a secret's name in them
 * not to count as the secret (review kc: `ls data/state.db`, a project's own SQLite file, was
 * refused). Strictest when unsure: a word counts so only when it is a plain path, every command
 * it stands in is one of a program that takes files (TAKES_FILES), nothing in the command is
 * computed (a variable, `$(…)`, `~user`, `cd -`), no word of it (a glob too) is at, in or above
 * Latch's home or a secret from the folder it runs in or any folder it names or moves to, nor is
 * that folder, nor names Latch's home or its other files by name (`.latch`); and the word, from each of those folders, is no secret by its real path nor by
 * another name (a hard link). See docs/policy.md, "What Latch always protects".
 */
export function plainlyElsewhere(
  commands: SimpleCommand[],
  cwd: string | undefined,
  places: ProtectedPlaces,
  real: (path: string) => string,
): (word: Word) => boolean {
  // Read once, when a secret's name is first found in a word: most commands name none.
  let judge: ((word: Word) => boolean) | undefined;
  return (word) => (judge ??= elsewhereIn(commands, cwd, places, real))(word);
}

function elsewhereIn(
  commands: SimpleCommand[],
  cwd: string | undefined,
  places: ProtectedPlaces,
  real: (path: string) => string,
): (word: Word) => boolean {
  const none = () => false;
  const words = commands.flat();
  if (cwd === undefined || words.length > MOST_WORDS) return none;
  // What only running tells may be a folder moved to or a link made first.
  const texts = words.map(literalText);
  if (texts.some((text) => text === undefined)) return none;
  // The folders it may run in: its own, any it moves to, and any a word names (`tar -C dir`,
  // `--directory=dir`, `-Cdir`), which a program may read its other words from.
  const bases = new Set([cwd, real(cwd)]);
  for (const command of commands) {
    if (!MOVES.has(programOf(command) ?? '')) continue;
    const target = command[1] && literalText(command[1]);
    if (programOf(command) === 'popd' || target === '-' || /^[+-]\d/.test(target ?? '')) return none;
    for (const base of [...bases]) bases.add(target ? asWalked(base, target) : places.variables['HOME']!);
  }
  for (const text of texts as string[])
    for (const form of forms(text)) {
      const folder = real(asWalked(cwd, form));
      if (isFolder(folder)) bases.add(folder);
    }
  if (bases.size > MOST_FOLDERS) return none;
  const latchs = (kind: string) => kind === 'secret' || kind === 'home';
  // No folder it runs in, and no word from any of them, is at, in or above Latch's home or a secret.
  const reaches = (word: Word) =>
    [...bases].some((base) =>
      pathTouches(pathPattern(word), base, places, real).some(({ place }) => latchs(place.kind)),
    );
  const formWords = words.flatMap((word, at) => [
    word,
    ...forms(texts[at]!)
      .slice(1)
      .map((text): Word => [{ text, glob: false }]),
  ]);
  if ([...bases].some((base) => reaches([{ text: base, glob: false }])) || formWords.some(reaches))
    return none;
  // A link's target is read from the link's folder, not the command's (`ln -s ../../.latch src/l`
  // from a project in the home folder): one to Latch's home spells its name.
  if (texts.some((text) => places.names.files.test(text!))) return none;
  const sameFileAs = placeByIdentity(placesFrom(places, cwd));
  const plain = new Set<string>();
  const other = new Set<string>();
  for (const command of commands)
    for (const word of command)
      (TAKES_FILES.has(programOf(command) ?? '') ? plain : other).add(JSON.stringify(word));
  return (word) => {
    const key = JSON.stringify(word);
    const text = literalText(word);
    if (!plain.has(key) || other.has(key) || text === undefined || !PLAIN.test(text)) return false;
    return [...bases].every((base) => {
      const file = sameFileAs(real(asWalked(base, text)));
      return file === undefined || !latchs(file.place.kind);
    });
  };
}

/** A word's text, and the value after its `=` or glued to its short option (`-Cdir`). */
const forms = (text: string) => [
  text,
  ...(text.includes('=') ? [text.slice(text.indexOf('=') + 1)] : []),
  ...(/^-[A-Za-z]./.test(text) ? [text.slice(2)] : []),
];

const programOf = (command: SimpleCommand) =>
  command[0] && literalText(command[0])?.split('/').at(-1)?.toLowerCase();

function isFolder(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false; // a name too long, no permission to look: no folder
  }
}
