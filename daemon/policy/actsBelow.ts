import { basename } from 'node:path';
import { literalText, type SimpleCommand, type Word } from './commandWords.ts';

/**
 * Programs that act on everything below a folder they are given, so that one given a folder above
 * Latch's home or an agent's settings reaches them: searches, archives, copies and comparisons
 * that read each file (`grep -r x ~`, `tar c .` run from the home folder), and changes to a whole
 * tree (`rm -r`, `chmod -R`). Always, or with an option.
 */
const ALWAYS = new Set([
  ...['rg', 'ag', 'ack', 'rgrep', 'tar', 'bsdtar', '7z', '7za', 'rsync', 'rclone', 'borg', 'restic'],
  'duplicity',
]);
const RECURSIVE = /^(-[a-zA-Z]*[rR][a-zA-Z]*|--recursive|--dereference-recursive|--directories=recurse)$/;
const TREE_RECURSIVE = /^(-[a-zA-Z]*R[a-zA-Z]*|--recursive)$/;
const BY_OPTION: Record<string, RegExp> = {
  ...Object.fromEntries(
    ['grep', 'egrep', 'fgrep', 'rm', 'zip', 'scp', 'diff', 'gzip', 'gunzip'].map((name) => [name, RECURSIVE]),
  ),
  ...Object.fromEntries(['chmod', 'chown', 'chgrp', 'setfacl'].map((name) => [name, TREE_RECURSIVE])),
  cp: /^(-[a-zA-Z]*[rRa][a-zA-Z]*|--recursive|--archive)$/,
};
/** find's actions that read or change what it finds; its tests alone only print names. */
const FIND_ACTION = /^-(delete|exec|execdir|ok|okdir|fprint0?|fprintf|fls)$/;
/**
 * git's commands that read or change every file below the paths they are given: outside a
 * repository `git diff a b` compares two folders, file by file; `add` and `stash -u` put what it
 * finds into git's objects, `clean` deletes it.
 */
const GIT_TREE_COMMANDS = new Set(['diff', 'add', 'grep', 'clean', 'stash']);

/** A folder that may hold any other: this one or one above it. */
const HERE_OR_ABOVE = /^\.(\.)?(\/\.\.)*\/?$/;

/**
 * The words of `commands` that a program acts on below, and the folder a search acts on when it
 * is given none (`find -delete`, `grep -r x`, `rg x`: the folder it runs in, `cwd`). With no
 * folder known (`cwd` undefined), `unsure` names a comparison of two folders, one of them this
 * one or one above it (`git diff . x`, which outside a repository prints every file): where it
 * runs may be the home folder.
 */
export function actsBelow(
  commands: readonly SimpleCommand[],
  cwd: string | undefined,
): { implicit: Word[]; reaches: (word: Word) => boolean; unsure?: string } {
  const reached = new Set<string>();
  const implicit: Word[] = [];
  let unsure: string | undefined;
  for (const command of commands) {
    const texts = command.map(literalText);
    const name = basename(texts[0] ?? '');
    const args = texts.slice(1);
    const given = args.filter((text) => text === undefined || !text.startsWith('-'));
    const recursive =
      ALWAYS.has(name) ||
      args.some((text) => text !== undefined && BY_OPTION[name]?.test(text)) ||
      (name === 'find' && args.some((text) => text === undefined || FIND_ACTION.test(text))) ||
      (name === 'git' && given.some((text) => text !== undefined && GIT_TREE_COMMANDS.has(text)));
    if (!recursive) continue;
    for (const word of command.slice(1)) reached.add(JSON.stringify(word));
    // With no folder, find searches the one it runs in; grep -r and rg too, given a pattern alone;
    // git's commands act on the work tree around it (`git add -A`).
    const searchesHere =
      name === 'git' ||
      (name === 'find'
        ? given.length === 0 || /^[-(!]/.test(args[0] ?? '-')
        : ['grep', 'egrep', 'fgrep', 'rgrep', 'rg', 'ag', 'ack'].includes(name) &&
          given.length <= (args.some((text) => text === '-e' || text === '-f') ? 0 : 1));
    if (searchesHere && cwd !== undefined) implicit.push([{ text: cwd, glob: false }]);
    const compared = name === 'git' ? given.slice(given.indexOf('diff') + 1) : [];
    if (
      cwd === undefined &&
      given.includes('diff') &&
      compared.length >= 2 &&
      compared.some((text) => text === undefined || HERE_OR_ABOVE.test(text))
    )
      unsure = 'git diff …';
  }
  for (const word of implicit) reached.add(JSON.stringify(word));
  return { implicit, reaches: (word) => reached.has(JSON.stringify(word)), ...(unsure ? { unsure } : {}) };
}
