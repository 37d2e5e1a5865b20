import { basename, isAbsolute, resolve } from 'node:path';
import { literalText, type SimpleCommand, type Word } from './commandWords.ts';
import { optionValues } from './optionValues.ts';

/**
 * Programs that act on everything below a folder they are given, so that one given a folder above
 * Latch's home or an agent's settings reaches them: searches, archives, copies and comparisons
 * that read each file (`grep -r x ~`, `tar c .` run from the home folder), and changes to a whole
 * tree (`rm -r`, `chmod -R`). Always, or with an option (as GNU's getopt shortens it too).
 */
const ALWAYS = new Set([
  ...['rg', 'ag', 'ack', 'rgrep', 'tar', 'gtar', 'bsdtar', 'pax', '7z', '7za', 'rsync', 'rclone'],
  ...['borg', 'restic', 'duplicity', 'unzip', 'cpio', 'bsdcpio'],
]);
const RECURSIVE =
  /^(-[a-zA-Z]*[rR][a-zA-Z]*|--rec(u(r(s(i(ve?)?)?)?)?)?|--dereference-recursive|--directories=recurse|--recurse-\w+|recurse)$/;
const TREE_RECURSIVE = /^(-[a-zA-Z]*R[a-zA-Z]*|--rec(u(r(s(i(ve?)?)?)?)?)?)$/;
const BY_OPTION: Record<string, RegExp> = {
  ...Object.fromEntries(
    [
      ...['grep', 'egrep', 'fgrep', 'ugrep', 'rm', 'zip', 'scp', 'diff', 'gzip', 'gunzip', 'pigz'],
      'zstd',
    ].map((name) => [name, RECURSIVE]),
  ),
  ...Object.fromEntries(['chmod', 'chown', 'chgrp', 'setfacl'].map((name) => [name, TREE_RECURSIVE])),
  cp: /^(-[a-zA-Z]*[rRa][a-zA-Z]*|--rec(u(r(s(i(ve?)?)?)?)?)?|--ar(c(h(i(ve?)?)?)?)?)$/,
};
/** find's (and fd's) actions that read or change what it finds; its tests alone only print names. */
const FIND_ACTION = /^-(delete|exec|execdir|ok|okdir|fprint0?|fprintf|fls)$/;
const FD_ACTION = /^(-[a-zA-Z]*[xX]|--exec(-batch)?)$/;
/** Searches whose first word is a pattern, unless an option gives it (`-e`, `-f`, `--regexp`). */
const SEARCHES = new Set(['grep', 'egrep', 'fgrep', 'ugrep', 'rgrep', 'rg', 'ag', 'ack']);
const PATTERN_OPTION = /^(-[a-zA-Z]*[ef]|--(regexp|file)(=.*)?)$/s;
/**
 * git's commands that read or change every file below the paths they are given: outside a
 * repository `git diff a b` compares two folders, file by file; `add` and `stash -u` put what it
 * finds into git's objects, `clean` deletes it.
 */
const GIT_TREE_COMMANDS = new Set(['diff', 'add', 'grep', 'clean', 'stash']);
/** A folder that may hold any other: this one or one above it (`.`, `..`, `./.`, `../..`). */
const HERE_OR_ABOVE = /^\.\.?(\/+\.\.?)*\/*$/;
/** A word git reads as a revision, not a path: `HEAD~1`, `main^`, `@{u}`, `a..b`, a hash. */
const REVISION = /[~^@:]|\.\.|^(HEAD|FETCH_HEAD|ORIG_HEAD|MERGE_HEAD)$|^[0-9a-f]{7,40}$/;

/**
 * The words of `commands` that a program acts on below, and the folder a search acts on when it
 * is given none (`find -delete`, `grep -r x`, `rg x`: the folder it runs in, `cwd`, or where an
 * earlier `cd` leads; `home` for a bare one). With no folder known (`cwd` undefined), `unsure`
 * names a comparison of two folders, one of them this one or one above it (`git diff . x`, which
 * outside a repository prints every file): where it runs may be the home folder.
 */
export function actsBelow(
  commands: readonly SimpleCommand[],
  cwd: string | undefined,
  home: string | undefined,
): { implicit: Word[]; reaches: (word: Word) => boolean; unsure?: string } {
  const reached = new Set<string>();
  const implicit: Word[] = [];
  let unsure: string | undefined;
  let folder = cwd;
  for (const command of commands) {
    const texts = command.map(literalText);
    const name = basename(texts[0] ?? '');
    const args = texts.slice(1);
    if (name === 'cd' || name === 'pushd') {
      // Home for a bare cd; not known for `cd -` or a folder only running tells.
      const to = args.find((text) => text === undefined || !text.startsWith('-'));
      folder =
        args.length === 0
          ? home
          : to === undefined
            ? undefined
            : isAbsolute(to)
              ? to
              : folder && resolve(folder, to);
      continue;
    }
    const given = args.filter((text) => text === undefined || !text.startsWith('-'));
    const recursive =
      ALWAYS.has(name) ||
      args.some((text) => text !== undefined && BY_OPTION[name]?.test(text)) ||
      (name === 'find' && args.some((text) => text === undefined || FIND_ACTION.test(text))) ||
      (name === 'fd' && args.some((text) => text === undefined || FD_ACTION.test(text))) ||
      (name === 'git' && given.some((text) => text !== undefined && GIT_TREE_COMMANDS.has(text)));
    if (!recursive) continue;
    // A search's pattern is no path (`grep -r "/" src`).
    const searches = SEARCHES.has(name);
    const patternGiven = args.some((text) => text === undefined || PATTERN_OPTION.test(text));
    const pattern =
      searches && !patternGiven
        ? command.findIndex((word, at) => at > 0 && !literalText(word)?.startsWith('-'))
        : -1;
    command.forEach((word, at) => {
      if (at === 0 || at === pattern) return;
      reached.add(JSON.stringify(word));
      // What an option is given reaches as far (`tar -C..`, `--directory=..`).
      for (const value of optionValues(texts[at] ?? ''))
        reached.add(JSON.stringify([{ text: value, glob: false }]));
    });
    // With no folder, find and fd search the one they run in; grep -r and rg too, given a pattern
    // alone; git's commands act on the work tree around it (`git add -A`).
    const searchesHere =
      name === 'git' ||
      (name === 'find'
        ? given.length === 0 || /^[-(!]/.test(args[0] ?? '-')
        : (searches || name === 'fd') && given.length <= (patternGiven ? 0 : 1));
    if (searchesHere && folder !== undefined) implicit.push([{ text: folder, glob: false }]);
    if (cwd === undefined && name === 'git' && comparesHere(args)) unsure = 'git diff …';
  }
  for (const word of implicit) reached.add(JSON.stringify(word));
  return { implicit, reaches: (word) => reached.has(JSON.stringify(word)), ...(unsure ? { unsure } : {}) };
}

/**
 * Whether `git diff`'s words may compare this folder, or one above it, with another, as it does
 * outside a repository: two paths, after `--` if there is one, neither of which reads as a revision.
 */
function comparesHere(args: readonly (string | undefined)[]): boolean {
  const diff = args.indexOf('diff');
  if (diff === -1) return false;
  const after = args.slice(diff + 1);
  const end = after.indexOf('--');
  const before = (end === -1 ? after : after.slice(0, end)).filter(
    (text) => text === undefined || !text.startsWith('-'),
  );
  const paths = end === -1 ? before : before.length > 0 ? [] : after.slice(end + 1);
  return (
    paths.length === 2 &&
    paths.some((text) => text === undefined || HERE_OR_ABOVE.test(text)) &&
    paths.every((text) => text === undefined || !REVISION.test(text))
  );
}
