import { spawnSync } from 'node:child_process';
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
  // One look per user (a look may run getent), however many includes name them.
  const homes = new Map<string, string | undefined>();
  const homeOf = (user: string) => {
    if (!homes.has(user)) homes.set(user, userHome(user, systemRoot, home));
    return homes.get(user);
  };
  // A folder of git's (`~/.config/git/`) is read for its `config`.
  const toRead = [...found].map((path): [string, number] => [
    global.includes(path) && path.endsWith('/git') ? join(path, 'config') : path,
    0,
  ]);
  for (let read = 0; read < toRead.length; read++) {
    const [file, depth] = toRead[read]!;
    if (depth >= MOST_DEPTH) continue;
    const text = readSmallFile(file, MOST_BYTES);
    for (const included of includedPaths(text, file, home, homeOf)) {
      if (found.has(included) || found.size >= MOST_FILES) continue;
      found.add(included);
      toRead.push([included, depth + 1]);
    }
  }
  // A system file the user may not write is read for its includes (one the user may write can
  // run code as well), not guarded itself.
  return [...found].filter((path) => !system.includes(path) || userMayWrite(path));
}

/**
 * The paths of a config file's `include.path` and `includeIf.<condition>.path` keys, as git reads
 * them: `~/` is the home folder and `~user/` that user's (`homeOf`, getpwnam's answer), and a
 * relative path is read from the folder of the file that includes it.
 */
export function includedPaths(
  text: string,
  file: string,
  home: string,
  homeOf: (user: string) => string | undefined = (user) => userHome(user, '/', home),
): string[] {
  const paths: string[] = [];
  for (const { section, key, value } of configEntries(text)) {
    // `[include]`, `[includeIf "gitdir:~/work/"]`, and the old `[include.sub]`.
    const name = section.split('.')[0];
    // Git uses the value as a C string: a NUL in it ends the path.
    const path = value.split('\0')[0]!;
    if ((name !== 'include' && name !== 'includeif') || key !== 'path' || !path) continue;
    const expanded = withUserHome(path, home, homeOf);
    if (expanded === undefined) continue; // git cannot expand it either: it includes nothing
    paths.push(isAbsolute(expanded) ? resolve(expanded) : resolve(dirname(file), expanded));
  }
  return paths;
}

/** `~` or `~/…` from the home folder, `~user` or `~user/…` from that user's, as git's interpolate_path. */
function withUserHome(
  value: string,
  home: string,
  homeOf: (user: string) => string | undefined,
): string | undefined {
  if (!value.startsWith('~')) return value;
  const slash = value.indexOf('/');
  const user = value.slice(1, slash < 0 ? undefined : slash);
  const rest = slash < 0 ? '' : value.slice(slash);
  const folder = user === '' ? home : homeOf(user);
  return folder === undefined ? undefined : folder + rest;
}

/**
 * A user's home folder, as getpwnam finds it for git: in the system's passwd file, else (on this
 * system's root) from `getent` (a directory service's users). Unsure, the folder by that name
 * beside the home folder, where macOS (`/Users/<name>`) and Linux (`/home/<name>`) put one:
 * guarding a file that is no config costs nothing.
 */
function userHome(user: string, systemRoot: string, home: string): string | undefined {
  const entry = (text: string) =>
    text
      .split('\n')
      .map((line) => line.split(':'))
      .find((fields) => fields[0] === user && fields.length >= 7)?.[5];
  const listed = entry(readSmallFile(join(systemRoot, 'etc', 'passwd'), MOST_BYTES));
  if (listed) return listed;
  if (systemRoot === '/') {
    const found = spawnSync('getent', ['passwd', user], { encoding: 'utf8', timeout: 2000 });
    const known = found.status === 0 ? entry(found.stdout) : undefined;
    if (known) return known;
  }
  return user === '.' || user === '..' ? undefined : join(dirname(home), user);
}

/**
 * A config file's entries, as git's parser reads them: sections (`[name]`, `[name "sub"]`, lower
 * case), keys (lower case) and values, quotes taken out, a comment (`#`, `;`) outside them cut,
 * escapes read, and a backslash at a line's end joining the next line to the value. What git
 * refuses (an unknown escape, a broken line) is read on, not stopped at: a file is guarded for
 * what it may include.
 */
function* configEntries(text: string): Generator<{ section: string; key: string; value: string }> {
  const source = text.replace(/\r\n/g, '\n');
  let section = '';
  let i = 0;
  while (i < source.length) {
    const char = source[i]!;
    if (/\s/.test(char)) i++;
    else if (char === '#' || char === ';') i = lineEnd(source, i);
    else if (char === '[') {
      header.lastIndex = i;
      const found = header.exec(source);
      section = found ? found[2]!.toLowerCase() : '';
      i = found ? header.lastIndex : lineEnd(source, i);
    } else if (/[A-Za-z]/.test(char)) {
      const name = /[A-Za-z][A-Za-z0-9-]*[ \t]*/y;
      name.lastIndex = i;
      const key = name.exec(source)![0].trimEnd().toLowerCase();
      i = name.lastIndex;
      if (source[i] !== '=') {
        // A key alone is true; anything else on its line is a broken line.
        i = lineEnd(source, i);
        continue;
      }
      const [value, end] = configValue(source, i + 1);
      yield { section, key, value };
      i = end;
    } else i = lineEnd(source, i);
  }
}

/**
 * `[name]` or `[name "sub"]` on one line. Each run of spaces or name characters is taken whole
 * (a lookahead's group matched again: what it took is not given back), so a `[` followed by a long
 * run that never closes is read in linear time, not tried at every split of the run.
 */
const header =
  /\[(?=([ \t]*))\1(?=([A-Za-z0-9.-]*))\2(?:(?=([ \t]+))\3"(?:[^"\\\n]|\\.)*")?(?=([ \t]*))\4\]/y;

const lineEnd = (text: string, from: number) => {
  const end = text.indexOf('\n', from);
  return end < 0 ? text.length : end;
};

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', b: '\b' };

/**
 * From just after a `=`: the value as git's parse_value reads it, and the index of the line's end.
 * Spaces around it go, those inside stay; a backslash and a line break are left out.
 */
function configValue(text: string, from: number): [string, number] {
  let value = '';
  let quoted = false;
  let comment = false;
  let trimAt: number | undefined;
  let i = from;
  for (; i < text.length && text[i] !== '\n'; i++) {
    const char = text[i]!;
    if (comment) continue;
    if (/\s/.test(char) && !quoted) {
      trimAt ??= value.length;
      if (value.length > 0) value += char;
      continue;
    }
    if (!quoted && (char === '#' || char === ';')) {
      comment = true;
      continue;
    }
    trimAt = undefined;
    if (char === '\\') {
      const next = text[++i];
      if (next === undefined || next === '\n') continue;
      value += ESCAPES[next] ?? next;
    } else if (char === '"') quoted = !quoted;
    else value += char;
  }
  return [trimAt === undefined ? value : value.slice(0, trimAt), i];
}
