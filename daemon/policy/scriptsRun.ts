import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import { commandWords, literalText, type SimpleCommand } from './commandWords.ts';
import { LONG_COMMAND_BYTES } from './policy.ts';

/**
 * A script file a command runs: `bash deploy.sh`, `python3 tools/x.py`, `. ./env.sh`,
 * `./deploy`. Its text is what runs, not the command's words: a phone is shown it, and
 * self-protection reads it as it reads the command.
 */
export interface RunScript {
  /** As the command names it, made absolute from the folder it runs in. */
  path: string;
  /** Undefined when it could not be read whole: `unread` says why. */
  text?: string;
  unread?: string;
  /** Run by a shell, so read as shell commands; else it is another language's code. */
  shell: boolean;
}

/** The most read of one script: a phone shows far less (LIMITS.detailBytes), and says it was cut. */
export const MOST_SCRIPT_BYTES = 64 * 1024;
/** The most scripts read for one command: more is more than a person writes in one. */
const MOST_SCRIPTS = 4;

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'busybox']);
const INTERPRETER =
  /^(python[\d.]*|pypy[\d.]*|node|nodejs|perl[\d.]*|ruby[\d.]*|php[\d.]*|tsx|ts-node|bun|deno|lua[\d.]*|Rscript)$/;
/** Words that put the program after them: `sudo bash x.sh`, `env A=1 python3 x.py`. */
const WRAPPERS = new Set(['sudo', 'env', 'nohup', 'exec', 'command', 'time', 'nice', 'doas']);
/**
 * An interpreter's options after which its code is in the command itself, or a module's: no
 * script file. A shell's is `-c`, alone or among other letters (`-lc`).
 */
const INLINE = new Set(['-c', '-e', '-E', '-m', '-p', '--eval', '--print', '--version', '--help']);
/** Options that take the next word as their value, which is no script: a shell's, then others'. */
const SHELL_OPTION_WITH_VALUE = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);
const OPTION_WITH_VALUE = new Set([
  '-W',
  '-X',
  '-I',
  '-r',
  '--require',
  '--import',
  '--loader',
  '--env-file',
]);

/**
 * The scripts `command` runs, read from where it runs (`cwd`), with `variables` as the shell
 * would expand them. Each is read at most MOST_SCRIPT_BYTES, only when it is a regular file, and
 * without waiting (a FIFO in its place is not read).
 */
export function scriptsRun(
  command: string,
  cwd: string | undefined,
  variables: Readonly<Record<string, string>>,
): RunScript[] {
  const found = new Map<string, RunScript>();
  // Longer than a phone shows, a command is asked at critical risk, and not read as words.
  if (utf8Length(command) > LONG_COMMAND_BYTES) return [];
  for (const words of commandWords(command, variables)) {
    const named = scriptNamed(words);
    if (!named || found.size >= MOST_SCRIPTS) continue;
    const path = isAbsolute(named.path)
      ? named.path
      : cwd && isAbsolute(cwd)
        ? resolve(cwd, named.path)
        : undefined;
    if (path === undefined || found.has(path)) continue;
    const read = readScript(path);
    // A program run by its path is a script only when it is text: a binary is no one's to show.
    if (named.byPath && read.text !== undefined && read.text.includes('\0')) continue;
    if (named.byPath && read.unread !== undefined) continue;
    const shell = named.byPath ? shebangIsShell(read.text ?? '') : named.shell;
    found.set(path, { path, ...read, shell });
  }
  return [...found.values()];
}

/** The script one simple command runs, if it runs one; `byPath` when the program is the script. */
function scriptNamed(words: SimpleCommand): { path: string; shell: boolean; byPath: boolean } | undefined {
  const texts = words.map(literalText);
  let at = texts.findIndex((text) => text === undefined || !/^[A-Za-z_]\w*=/.test(text));
  // A program that runs the one after it: the first word after it that names one to run.
  if (at >= 0 && WRAPPERS.has(basename(texts[at] ?? ''))) {
    const runs = texts.findIndex(
      (text, index) => index > at && text !== undefined && (runsCode(basename(text)) || text.includes('/')),
    );
    if (runs === -1) return undefined;
    at = runs;
  }
  const program = texts[at];
  if (program === undefined) return undefined;
  const name = basename(program);
  if (name === 'source' || name === '.') {
    const path = texts[at + 1];
    return path ? { path, shell: true, byPath: false } : undefined;
  }
  const shell = SHELLS.has(name);
  if (runsCode(name)) {
    for (let next = at + 1; next < texts.length; next++) {
      const word = texts[next];
      if (word === undefined) return undefined;
      // php's -r is its code; node's and ruby's name a module to load first.
      const inline = INLINE.has(word) || (word === '-r' && name.startsWith('php'));
      if (shell ? /^(-[a-zA-Z]*c[a-zA-Z]*|--command)$/.test(word) : inline) return undefined;
      if ((shell ? SHELL_OPTION_WITH_VALUE : OPTION_WITH_VALUE).has(word)) next++;
      else if (word === 'run' && (name === 'deno' || name === 'bun')) continue;
      else if (!word.startsWith('-') && !word.startsWith('+')) return { path: word, shell, byPath: false };
    }
    return undefined;
  }
  return program.includes('/') ? { path: program, shell: true, byPath: true } : undefined;
}

const runsCode = (name: string) =>
  SHELLS.has(name) || INTERPRETER.test(name) || name === 'source' || name === '.';

/** A script run by its path: a shell runs it unless its `#!` line names another program. */
function shebangIsShell(text: string): boolean {
  const line = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(text);
  if (!line) return true;
  const program = basename(line[1]!) === 'env' && line[2] ? line[2] : line[1]!;
  return SHELLS.has(basename(program));
}

function readScript(path: string): { text?: string; unread?: string } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { unread: (error as NodeJS.ErrnoException).code ?? 'cannot be opened' };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { unread: 'not a regular file' };
    if (stat.size > MOST_SCRIPT_BYTES) return { unread: `${stat.size} bytes, more than Latch reads` };
    const bytes = Buffer.alloc(stat.size);
    const length = readSync(fd, bytes, 0, stat.size, 0);
    return { text: bytes.subarray(0, length).toString('utf8') };
  } catch (error) {
    return { unread: (error as NodeJS.ErrnoException).code ?? 'cannot be read' };
  } finally {
    closeSync(fd);
  }
}
