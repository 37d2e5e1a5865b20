import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { commandWords, literalText } from './commandWords.ts';

/** zsh's start-up files, read from `$ZDOTDIR` once `.zshenv` sets it. */
export const ZSH_FILES = ['.zshenv', '.zprofile', '.zlogin', '.zshrc'];

/** Words that open a compound command before the simple command in it (`then . ~/.x`). */
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '{', '!', 'time']);

/** Enough for the start-up files people keep; a file larger than this is not read. */
const MOST_FILES = 64;
const MOST_BYTES = 256 * 1024;

/**
 * What the shell start-up files run as well, read when the daemon starts: the files they source
 * (`. "$HOME/.cargo/env"`, `[ -f ~/.bash_aliases ] && . ~/.bash_aliases`), the folders a loop
 * sources from (`for f in ~/.bashrc.d/*; do . "$f"; done`), and zsh's files in the `ZDOTDIR` one
 * sets, each read in turn. Edited, any of them runs before Latch's hook as surely as the file
 * that sources it: `exit 0` there lets every tool run. A path only running tells
 * (`${XDG_CONFIG_HOME:-…}`) is not guessed at.
 */
export function sourcedStartupFiles(
  startupFiles: readonly string[],
  variables: Record<string, string>,
): string[] {
  const found = new Set<string>();
  const toRead = [...startupFiles];
  const add = (path: string | undefined) => {
    if (path === undefined || !isAbsolute(path) || startupFiles.includes(path) || found.has(path)) return;
    found.add(path);
    toRead.push(path);
  };
  for (let read = 0; read < toRead.length && read < MOST_FILES; read++) {
    for (const command of commandWords(readSmall(toRead[read]!), variables)) {
      const texts = command.map(literalText);
      let at = 0;
      while (KEYWORDS.has(texts[at] ?? '')) at++;
      if (texts[at] === '.' || texts[at] === 'source') add(texts[at + 1]);
      if (texts[at] === 'for')
        for (const text of texts.slice(texts.indexOf('in', at) + 1))
          if (text !== undefined && /[*?[]/.test(text.split('/').at(-1)!)) add(dirname(text));
      for (const text of texts) {
        const zdotdir = /^ZDOTDIR=(.+)$/.exec(text ?? '')?.[1];
        if (zdotdir !== undefined) for (const file of ZSH_FILES) add(join(zdotdir, file));
      }
    }
  }
  return [...found];
}

function readSmall(path: string): string {
  try {
    const text = readFileSync(path, 'utf8');
    return text.length <= MOST_BYTES ? text : '';
  } catch {
    return ''; // not there (yet), a folder, or not ours to read: nothing it sources
  }
}
