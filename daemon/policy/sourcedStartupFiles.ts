import { readdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { commandWords, literalText } from './commandWords.ts';
import { pathPattern, segmentMatches } from './pathPattern.ts';
import { readSmallFile } from './readSmallFile.ts';

/** zsh's start-up files, read from `$ZDOTDIR` once `.zshenv` sets it. */
export const ZSH_FILES = ['.zshenv', '.zprofile', '.zlogin', '.zshrc'];

/** Words before the simple command in a compound one (`then . ~/.x`), or before the builtin. */
const LEADING = new Set([
  'if',
  'then',
  'else',
  'elif',
  'do',
  'while',
  'until',
  '{',
  '!',
  'time',
  'builtin',
  'command',
]);

/** Enough for the start-up files people keep; a larger file is not read, nor more of them. */
const MOST_FILES = 64;
const MOST_BYTES = 256 * 1024;
const MOST_BYTES_IN_ALL = 1024 * 1024;

/**
 * What the shell start-up files run as well, read when the daemon starts: the files they source
 * (`. "$HOME/.cargo/env"`, `[ -f ~/.bash_aliases ] && . ~/.bash_aliases`), what a loop sources
 * (`for f in ~/.bashrc.d/*.sh; do . "$f"; done`: the folder; `for f in ~/.{exports,aliases}`: each
 * file), and zsh's files in the `ZDOTDIR` one sets, each read in turn. Edited, any of them runs
 * before Latch's hook as surely as the file that sources it: `exit 0` there lets every tool run.
 * And the frameworks' folders they are in (frameworkFolder).
 * A path only running tells (`${XDG_CONFIG_HOME:-…}`) is not guessed at.
 */
export function sourcedStartupFiles(
  startupFiles: readonly string[],
  home: string,
): { files: string[]; frameworks: string[] } {
  const found = new Set<string>();
  const frameworks = new Set<string>();
  const toRead = [...startupFiles];
  const add = (path: string | undefined) => {
    if (path === undefined || !isAbsolute(path) || startupFiles.includes(path) || found.has(path)) return;
    if (found.size >= MOST_FILES) return;
    found.add(path);
    toRead.push(path);
    const framework = frameworkFolder(path, home);
    if (framework) frameworks.add(framework);
  };
  let budget = MOST_BYTES_IN_ALL;
  for (let read = 0; read < toRead.length; read++) {
    const text = readSmallFile(toRead[read]!, Math.min(MOST_BYTES, budget));
    budget -= text.length;
    let loop: (string | undefined)[] | undefined;
    for (const command of commandWords(text, { HOME: home })) {
      const texts = command.map(literalText);
      let at = 0;
      while (LEADING.has(texts[at] ?? '')) at++;
      if (texts[at] === 'for') loop = texts.slice(texts.indexOf('in', at) + 1);
      if (texts[at] === 'done') loop = undefined;
      if (texts[at] === '.' || texts[at] === 'source') {
        const sourced = texts[at + 1];
        if (sourced !== undefined) add(sourced);
        else for (const listed of loop ?? []) for (const path of loopFiles(listed, home)) add(path);
      }
      for (const text of texts) {
        const zdotdir = /^ZDOTDIR=(.+)$/.exec(text ?? '')?.[1];
        if (zdotdir !== undefined) for (const file of ZSH_FILES) add(join(zdotdir, file));
      }
    }
  }
  return { files: [...found], frameworks: [...frameworks] };
}

/**
 * The hidden folder of its own, right in the home folder, that a sourced file is in (`~/.nvm`,
 * `~/.oh-my-zsh`, `~/.cargo`): a framework's, which loads plugins and programs from beside the
 * file by names only running tells. Not `~/.config` nor `~/.local`, which hold much else.
 */
function frameworkFolder(path: string, home: string): string | undefined {
  if (!path.startsWith(`${home}/`)) return undefined;
  const first = path.slice(home.length + 1).split('/')[0]!;
  const folder = join(home, first);
  return first.startsWith('.') && folder !== path && !['.config', '.local'].includes(first)
    ? folder
    : undefined;
}

/**
 * What one word of a loop's list names: the file, or for a pattern (`~/.bashrc.d/*.sh`) its
 * folder; in the home folder or above it, whose other files are no start-up files, the files it
 * matches now.
 */
function loopFiles(word: string | undefined, home: string): string[] {
  if (word === undefined || !isAbsolute(word)) return [];
  const last = basename(word);
  if (!/[*?[]/.test(last)) return [word];
  const folder = dirname(word);
  if (`${home}/`.startsWith(`${folder}/`) || /[*?[]/.test(folder)) {
    const pattern = pathPattern([{ text: last, glob: true }]).segments[0]!;
    try {
      return readdirSync(folder)
        .filter((name) => segmentMatches(pattern, name.toLowerCase()))
        .map((name) => join(folder, name));
    } catch {
      return [];
    }
  }
  return [folder];
}
