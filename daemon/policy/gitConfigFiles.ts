import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { userMayWrite } from './userMayWrite.ts';
import { readSmallFile } from './readSmallFile.ts';

/** Git follows includes ten deep; enough files and bytes for the config people keep. */
const MOST_DEPTH = 10;
const MOST_FILES = 64;
const MOST_BYTES = 256 * 1024;

/**
 * The git config files every repository's git reads, as git finds them, read when the daemon
 * starts: the user's (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/` and `~/.config/git/`,
 * `$GIT_CONFIG_GLOBAL`), the system's where the user may write it (`/etc/gitconfig`,
 * `$GIT_CONFIG_SYSTEM`, the `etc/gitconfig` of each git on PATH, as Homebrew's), and every file
 * any of them pulls in by `[include] path` or `[includeIf …] path` (a system file the user may
 * not write too), each read in turn, whatever its condition. Edited, any of them runs code on the
 * allowed `git status` (`core.fsmonitor`). A path git only knows when it runs (`%(prefix)/`) is
 * not guessed at.
 */
export function gitConfigFiles(
  env: NodeJS.ProcessEnv,
  home: string,
  pathFolders: readonly string[],
  systemRoot = '/',
): string[] {
  const config = env['XDG_CONFIG_HOME'] || join(home, '.config');
  const global = [
    join(home, '.gitconfig'),
    join(config, 'git'),
    join(home, '.config', 'git'),
    ...(env['GIT_CONFIG_GLOBAL'] ? [resolve(env['GIT_CONFIG_GLOBAL'])] : []),
  ];
  const gits = pathFolders.flatMap((folder) => {
    try {
      return [dirname(dirname(realpathSync(join(folder, 'git')))), dirname(folder)];
    } catch {
      return []; // no git there
    }
  });
  const system = [
    join(systemRoot, 'etc', 'gitconfig'),
    ...(env['GIT_CONFIG_SYSTEM'] ? [resolve(env['GIT_CONFIG_SYSTEM'])] : []),
    ...gits.map((prefix) => join(prefix, 'etc', 'gitconfig')),
  ];
  const found = new Set([...global, ...system]);
  // A folder of git's (`~/.config/git/`) is read for its `config`.
  const toRead = [...found].map((path): [string, number] => [
    global.includes(path) && path.endsWith('/git') ? join(path, 'config') : path,
    0,
  ]);
  for (let read = 0; read < toRead.length; read++) {
    const [file, depth] = toRead[read]!;
    if (depth >= MOST_DEPTH) continue;
    for (const included of includedPaths(readSmallFile(file, MOST_BYTES), file, home)) {
      if (found.has(included) || found.size >= MOST_FILES) continue;
      found.add(included);
      toRead.push([included, depth + 1]);
    }
  }
  // A system file the user may not write is read for its includes (one the user may write can
  // run code as well), not guarded itself.
  return [...found].filter((path) => !system.includes(path) || userMayWrite(path));
}

/** The paths of a config file's `include.path` and `includeIf.<condition>.path` keys. */
export function includedPaths(text: string, file: string, home: string): string[] {
  const paths: string[] = [];
  let including = false;
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    // `[include]`, `[includeIf "gitdir:~/work/"]`, the old `[include.sub]`: a key may follow on its line.
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\](.*)$/.exec(line);
    if (header) {
      const section = header[1]!.toLowerCase().split('.')[0]!;
      including = section === 'include' || section === 'includeif';
      line = header[2]!.trim();
    }
    if (!including) continue;
    const key = /^path\s*=\s*(.*)$/i.exec(line);
    if (!key) continue;
    const value = configValue(key[1]!);
    if (value === '') continue;
    const expanded = value.startsWith('~/') ? join(home, value.slice(2)) : value;
    // A relative path is read from the folder of the file that includes it.
    paths.push(isAbsolute(expanded) ? resolve(expanded) : resolve(dirname(file), expanded));
  }
  return paths;
}

/** A value as git reads it: quotes taken out, a comment (`#`, `;`) outside them cut, escapes read. */
function configValue(text: string): string {
  let value = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && i + 1 < text.length) {
      const next = text[++i]!;
      value += next === 'n' ? '\n' : next === 't' ? '\t' : next;
    } else if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '#' || char === ';')) break;
    else value += char;
  }
  return value.trim();
}
