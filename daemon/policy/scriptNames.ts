import { extname } from 'node:path';

/**
 * The words scriptsRun and its helpers share: which programs run code, which files are code, and
 * how a file a command runs code from is named before it is read (`Named`).
 */

export const SHELLS = new Set([
  ...['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'busybox', 'csh', 'tcsh'],
]);
export const INTERPRETER =
  /^(python[\d.]*|pypy[\d.]*|node|nodejs|perl[\d.]*|ruby[\d.]*|php[\d.]*|tsx|ts-node|bun|deno|lua[\d.]*|luajit|Rscript|tclsh[\d.]*|wish[\d.]*|expect|julia|raku|elixir|groovy|osascript|pwsh|powershell)$/;
/** A wrapper's option that runs the program in another folder. */
export const CHANGES_FOLDER =
  /^(-C|-D|--chdir(=.*)?|--directory(=.*)?|--working-directory(=.*)?|--cwd(=.*)?)$/s;
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
      /** Node's environment file: only the options it gives Node may load code (never shown). */
      envFile?: true;
    }
  | { unread: string; shell: boolean; what: string };

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
