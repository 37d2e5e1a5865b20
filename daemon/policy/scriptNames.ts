import { extname } from 'node:path';
import { literalText, readAgain, type SimpleCommand } from './commandWords.ts';

/**
 * The words scriptsRun and its helpers share: which programs run code, which files are code, and
 * how a file a command runs code from is named before it is read (`Named`).
 */

/** Words that run the program after them: `sudo bash x.sh`, `timeout 60 python3 x.py`. */
export const WRAPPERS = new Set([
  ...['sudo', 'doas', 'env', 'nohup', 'exec', 'command', 'builtin', 'time', 'nice', 'ionice', 'chrt'],
  ...['taskset', 'numactl', 'timeout', 'setsid', 'stdbuf', 'unbuffer', 'flock', 'xargs', 'parallel'],
  ...['watch', 'systemd-run', 'nsenter', 'unshare', 'chroot', 'strace', 'ltrace', 'firejail', 'bwrap'],
  ...['faketime', 'caffeinate', 'chronic', 'torsocks', 'proxychains', 'proxychains4', 'setpriv', 'screen'],
  ...['runuser'],
]);
export const SHELLS = new Set([
  ...['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'busybox', 'csh', 'tcsh'],
]);
/**
 * A shell's option after which its code is a word of the command: `-c`, alone or among other
 * letters (`-lc`), or fish's `--command`, whose code may be joined to it (`--command=make`).
 */
export const SHELL_CODE_OPTION = /^(-[a-zA-Z]*c[a-zA-Z]*|--command(=.*)?)$/s;
/** A shell's options that take the next word as their value: `-o pipefail`, `--rcfile f`. */
export const SHELL_OPTION_WITH_VALUE = new Set(['-o', '+o', '-O', '+O']);
/** A shell's start-up file, which it runs first: `bash --rcfile f -i`. */
export const SHELL_START_FILE = new Set(['--rcfile', '--init-file']);

/**
 * Where the code a shell runs for `-c` is among `args` (`bash -lc x`, `fish --command=x`): the
 * first word after its options, or, for `su`, the option's own value (`su - me -c x`); past the
 * words when none comes after `-c`. Undefined with no `-c`, or where a word before it is one
 * only running tells.
 */
function shellCodeAt(args: readonly (string | undefined)[], name: string): number | undefined {
  const valueOfOption = name === 'su' || name === 'runuser';
  let given = false;
  for (let at = 0; at < args.length; at++) {
    const arg = args[at];
    if (arg === undefined) return given ? at : undefined;
    if (/^--(session-)?command=/.test(arg)) return at;
    if (SHELL_CODE_OPTION.test(arg) || (valueOfOption && arg === '--session-command')) {
      if (valueOfOption) return at + 1;
      given = true;
    } else if (SHELL_OPTION_WITH_VALUE.has(arg) || SHELL_START_FILE.has(arg)) at++;
    else if (!valueOfOption && !arg.startsWith('-') && !arg.startsWith('+')) return given ? at : undefined;
  }
  // `-c` with no code after it: its code is words only running adds (`… | xargs sh -c`).
  return given ? args.length : undefined;
}
export const INTERPRETER =
  /^(python[\d.]*|pypy[\d.]*|node|nodejs|perl[\d.]*|ruby[\d.]*|php[\d.]*|tsx|ts-node|bun|deno|lua[\d.]*|luajit|Rscript|tclsh[\d.]*|wish[\d.]*|expect|julia|raku|elixir|groovy|osascript|pwsh|powershell)$/;
/** A wrapper's option that runs the program in another folder. */
export const CHANGES_FOLDER =
  /^(-C|-D|--(chdir|directory|working-directory|cwd|wd|workdir|chroot|root)(=.*)?)$/s;
/** A file a runner is given that is code to run, by its extension: a shell's, or another language's. */
export const CODE_FILE =
  /\.(sh|bash|zsh|py|js|mjs|cjs|ts|mts|cts|tsx|jsx|rb|pl|pm|php|lua|r|jl|tcl|exs|go|java|kt|kts|swift|rs|ps1|sql|awk|vim|mk)$/i;
export const SHELL_FILE = /\.(sh|bash|zsh)$/i;
/** Options that load code from the file they name before the script (`node -r ./setup.js x.js`). */
export const LOADS_CODE = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader']);
/** A program's options that name a file of its code; `combines` when short flags join (`sed -nf x`). */
export type FileOptions = { options: readonly string[]; shell: boolean; patch?: true; combines?: true };

/** `vim -u NONE`: no file. */
const NO_FILE = new Set(['NONE', 'NORC', 'NOPLUGIN']);

/** The kinds of settings files read for what makes code run: an environment file, npm's, yarn's. */
export type SettingsFile = 'environment' | 'npmrc' | 'yarnrc' | 'yarnrc.yml';

/**
 * npm's (and pnpm's) settings that change what runs a project's scripts and installs, however
 * given (`--script-shell`, `npm_config_script_shell`, `.npmrc`): the shell, Node's options, other
 * files of settings, the programs that build and fetch packages, pnpm's hooks.
 */
export const NPM_CODE_SETTINGS = [
  ...['script-shell', 'node-options', 'userconfig', 'globalconfig', 'onload-script', 'node-gyp', 'git'],
  ...['shell', 'editor', 'init-module', 'pnpmfile', 'global-pnpmfile', 'use-node-version', 'node-mirror'],
];
/** npm's settings that pick where scripts run, which Latch follows from a command's options only. */
export const NPM_PLACE_SETTINGS = ['prefix', 'workspace', 'workspaces', 'include-workspace-root'];

/**
 * Which of a project's packages a runner runs in (`npm -w web test`, `pnpm -r build`): those
 * its selectors pick (a name, a pattern of names, a folder), with the project's root or not; or
 * every one, the root too.
 */
export type WorkspacePick = { selectors: readonly string[]; withRoot: boolean } | { every: true };

/**
 * A file one simple command runs code from, as written: `byPath` when it is the program,
 * `ifFound` when a word may name one or not (a module, an argument). Or code it cannot read,
 * `what` saying whose.
 */
export type Named =
  | {
      path: string;
      shell: boolean;
      byPath?: true;
      patch?: true;
      ifFound?: true;
      /** The scripts of a package.json that run, if it holds them: no other part of it runs. */
      packageScripts?: readonly string[];
      /** An install: the local packages it installs too (workspaces, `file:` folders) run theirs. */
      installs?: true;
      /** The project's packages a runner runs these scripts in, instead of the folder's. */
      workspaces?: WorkspacePick;
      /** One of the project's packages beyond the folder's (a workspace, a local dependency). */
      local?: true;
      /** The package runner that runs these scripts, whose files of settings may change what runs. */
      runner?: string;
      /** A file of settings, read only for what in it makes code run (never shown: they hold secrets). */
      settings?: SettingsFile;
      /** Read as if a program Latch does not know ran it: shown if it is there, never said unread. */
      guess?: true;
    }
  | { unread: string; shell: boolean; what: string }
  /** Code written in the command that a shell or `eval` runs, read as commands of their own. */
  | { commands: string; variables: Readonly<Record<string, string>> };

const codeUnknown = (what: string): Named => ({
  unread: 'it runs code only running tells',
  shell: true,
  what,
});

/**
 * The program that runs a shell and completes its words: `find -exec`, which puts a path for
 * `{}`; `xargs` and `parallel`, which add their input's words (`appends`), and put it for `{}`
 * (parallel's `{.}`, `{1}`, `{= =}`, `:::`) or for a string an option names (`replaces`:
 * `xargs -I %`).
 */
export interface Feeder {
  appends: boolean;
  replaces: boolean;
}
const PUT_IN_BY_FEEDER = /\{(\/\/|\/\.|[.\/#%]|\d+[.\/]*)?\}|\{=.*=\}|^:::/s;

/**
 * The code a shell runs for `-c` (`sh -c make`, `su -c make`), to be read as commands with the
 * words after it as `$0`, `$1`…; none when the lexer read it already (`bash -c 'cat x'`). Said
 * unread when only running tells it (`sh -c "$x"`, `xargs sh -c`, which takes it from its input),
 * or the program running the shell (`fed`) puts it in, or the words it reads.
 */
export function shellCodeRun(name: string, words: SimpleCommand, fed?: Feeder): Named[] {
  const args = words.map(literalText);
  const at = shellCodeAt(args, name);
  if (at === undefined) return [];
  const text = args[at];
  const code = text?.replace(/^--(session-)?command=/, '');
  const after = args.slice(at + 1);
  const putIn = (word: string | undefined) => word !== undefined && PUT_IN_BY_FEEDER.test(word);
  if (
    code === undefined ||
    (fed && (fed.replaces || putIn(code) || (code.includes('$') && (fed.appends || after.some(putIn)))))
  )
    return [codeUnknown(`${name}'s code`)];
  // Given words, code that moves or sets its parameters (`shift`, `set --`) or makes others of
  // them (`${1%x}`, `${@:2}`, `"n$@"`, `IFS=x; $*`) runs what only running tells.
  const moves = /\b(shift|set|getopts)\b/.test(code);
  const allWords = [...code.matchAll(ALL_PARAMETERS)];
  if (
    after.length > 0 &&
    (moves
      ? /\$\{?[\d@*!]/.test(code)
      : CHANGED_PARAMETER.test(code) ||
        (allWords.length > 0 && (/\bIFS=/.test(code) || allWords.some((found) => !standsAlone(code, found)))))
  )
    return [codeUnknown(`${name}'s code`)];
  const positional = moves ? [] : after;
  const variables = Object.fromEntries(
    positional.flatMap((value, index) => (value === undefined || index > 9 ? [] : [[String(index), value]])),
  );
  // `"$@"` and `$*` stand for the words after `$0`, however many: read as a command of their own
  // too, which they are where they start one (`sh -c 'exec "$@"' sh npm test`).
  const rest = positional.slice(1);
  if (allWords.length > 0 && rest.some((word) => word === undefined)) return [codeUnknown(`${name}'s code`)];
  const asCommand: Named[] =
    allWords.length > 0 && rest.length > 0
      ? [{ commands: rest.map((word) => `'${word!.replaceAll("'", "'\\''")}'`).join(' '), variables: {} }]
      : [];
  // Read again with the command's words as its `$0`, `$1`… (`sh -c '$0' make`).
  const usesWords = Object.keys(variables).length > 0 && code.includes('$');
  return [
    ...(readAgain(words[at]!, code) && !usesWords ? [] : [{ commands: code, variables }]),
    ...asCommand,
  ];
}

/** A shell's words for all its parameters: `$@`, `$*`, `${@}`, `${*}`. */
const ALL_PARAMETERS = /\$(@|\*|\{@\}|\{\*\})/g;
/** A parameter made into another: `${1%x}`, `${@:2}`, `${@/x/y}`, `${!#}`. */
const CHANGED_PARAMETER = /\$\{(?:[@*]|\d+)[^}\d]|\$\{![#@*\d]/;

/** Whether all the parameters stand as words of their own, in double quotes or not (`"$@"`, `$*`). */
function standsAlone(code: string, found: RegExpMatchArray): boolean {
  let start = found.index!;
  let end = start + found[0].length;
  if (code[start - 1] === '"' && code[end] === '"') {
    start--;
    end++;
  }
  return /^$|[\s;|&(]$/.test(code.slice(start - 1, start)) && /^$|^[\s;|&)]/.test(code.slice(end, end + 1));
}

/** What `eval` joins and runs, as commands (`eval npm test`), unless the lexer read it already. */
export function evalCodeRun(words: SimpleCommand): Named[] {
  const args = words.map(literalText);
  if (args.length === 0) return [];
  if (args.some((arg) => arg === undefined)) return [codeUnknown('eval')];
  const code = args.join(' ');
  return args.length === 1 && readAgain(words[0]!, code) ? [] : [{ commands: code, variables: {} }];
}

export const unreadScript = (name: string, shell: boolean): Named => ({
  unread: 'its script is a value only running tells',
  shell,
  what: `${name}'s script`,
});

/** The files named after `options` (`-f x`, `-fx`, `--file=x`); one only running names is unread. */
export function optionFiles(
  args: (string | undefined)[],
  { options, shell, patch, combines }: FileOptions,
): Named[] {
  const named: Named[] = [];
  args.forEach((word, index) => {
    if (word === undefined) return;
    for (const option of options) {
      // `-f x`, `--file=x`, `-fx`, or short flags together ending in it: `sed -nf x`.
      const short = combines && option.length === 2 && /^-[a-zA-Z]+$/.test(word) && word.endsWith(option[1]!);
      const value =
        word === option || short
          ? args[index + 1]
          : word.startsWith(`${option}=`)
            ? word.slice(option.length + 1)
            : option.length === 2 && word.startsWith(option) && word.length > 2
              ? word.slice(2)
              : '';
      if (value === undefined)
        named.push({ unread: 'its file is one only running names', shell, what: `${option}'s file` });
      else if (value !== '' && !NO_FILE.has(value))
        named.push({ path: value, shell, ifFound: true, ...(patch ? { patch } : {}) });
    }
  });
  return named;
}

/** A file, not a package's name: `./setup.js`, `/opt/x.mjs`, `hooks/x.ts` (`dotenv/config` is a package). */
export const looksLikeAFile = (value: string) =>
  value.startsWith('.') || value.startsWith('/') || CODE_FILE.test(value) || extname(value) === '.node';

export const runsCode = (name: string) =>
  SHELLS.has(name) || INTERPRETER.test(name) || name === 'source' || name === '.';

/** What is said of a file of which nothing runs: a package.json without the scripts run. */
export const NOTHING_RUNS = 'nothing of it runs';
