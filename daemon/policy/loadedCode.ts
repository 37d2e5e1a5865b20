import { join } from 'node:path';
import { ASSIGNMENT, literalText, type SimpleCommand, type Word } from './commandWords.ts';
import {
  LOADS_CODE,
  looksLikeAFile,
  NPM_CODE_SETTINGS,
  NPM_PLACE_SETTINGS,
  type Named,
} from './scriptNames.ts';

/**
 * Code a command's environment and options make a program load or run, beside its script:
 * `BASH_ENV`, `NODE_OPTIONS`, a `PYTHONPATH`'s `sitecustomize.py`, Perl's and Ruby's modules,
 * a program a variable names (`GIT_EXTERNAL_DIFF=./x.sh`), git's `-c` settings.
 */

/**
 * Variables that make a program load code before its own: bash's start-up script (sh reads
 * `ENV` only when interactive), Node's options (its `--require`), and what is loaded into any
 * program or interpreter, which Latch cannot show.
 */
const SHELL_START_VARIABLE = /^BASH_ENV=(.+)$/s;
const NODE_OPTIONS = /^NODE_OPTIONS=(.*)$/s;
const LOADER_VARIABLES =
  /^(LD_PRELOAD|LD_AUDIT|PERL5OPT|PERL5DB|RUBYOPT|PYTHONSTARTUP|PYTHONHOME|PYTHONUSERBASE|NODE_PATH|JAVA_TOOL_OPTIONS|MAKEFILES|BUN_OPTIONS)=./s;
/**
 * The configuration git is given before its command: each `-c` setting (undefined where only
 * running tells), and whether any comes from elsewhere (`--config-env`, `--exec-path`, another
 * git folder's config by `--git-dir`). Its configuration names programs it runs
 * (`core.fsmonitor`, `core.pager`, `alias.x=!…`).
 */
function gitConfiguration(args: (string | undefined)[]): {
  settings: (string | undefined)[];
  fromElsewhere: boolean;
} {
  const settings: (string | undefined)[] = [];
  for (let at = 0; at < args.length; at++) {
    const arg = args[at];
    if (arg === undefined || /^--(config-env|exec-path|git-dir)(=|$)/.test(arg))
      return { settings, fromElsewhere: true };
    if (!arg.startsWith('-')) break;
    if (arg === '-c') settings.push(args[++at]);
    else if (arg === '-C' || arg === '--work-tree' || arg === '--namespace') at++;
  }
  return { settings, fromElsewhere: false };
}

export function configuresGit(args: (string | undefined)[]): boolean {
  const { settings, fromElsewhere } = gitConfiguration(args);
  return fromElsewhere || settings.length > 0;
}

/**
 * The code git's `-c` settings name: a program by its path, read as a script
 * (`-c core.fsmonitor=./x.sh`); folders and files of settings or hooks, said unread.
 */
export function gitConfigured(args: (string | undefined)[]): Named[] {
  const { settings, fromElsewhere } = gitConfiguration(args);
  const unread = (why: string): Named => ({ unread: why, shell: true, what: "git's configuration" });
  return [
    ...(fromElsewhere ? [unread('git is configured from where only running tells')] : []),
    ...settings.flatMap((setting): Named[] => {
      const [, key, value] = /^([^=]+)=(.*)$/s.exec(setting ?? '') ?? [];
      if (setting === undefined) return [unread('a setting only running tells')];
      if (key === undefined || value === undefined) return [];
      if (/^(core\.hookspath|include\.path|includeif\..*\.path)$/i.test(key) && value !== '/dev/null')
        return [unread(`${key} names files git runs or reads`)];
      const program = value.trim().replace(/^!/, '').split(/\s+/)[0]!;
      return program.includes('/') ? [{ path: program, shell: true, byPath: true }] : [];
    }),
  ];
}

/** The variables one simple command sets, before its program or after `env`: `A=1 env B=2 x`. */
export function assignedIn(texts: (string | undefined)[]): Record<string, string> {
  const assigned: Record<string, string> = {};
  for (const text of texts) {
    const name = text === undefined ? undefined : ASSIGNMENT.exec(text)?.[1];
    if (name !== undefined) assigned[name] = text!.slice(name.length + 1);
  }
  return assigned;
}

/** The folders of a search path (`lib:/opt/x`), the empty ones left out. */
export const searchFolders = (value: string | undefined): string[] =>
  value === undefined ? [] : value.split(':').filter(Boolean);

/**
 * The files of the modules Perl's `-M` and `-m`, and Ruby's `-r`, load from the folders `-I`
 * and `PERL5LIB` or `RUBYLIB` add (`perl -Ilib -MSetup -e 1` loads `lib/Setup.pm`). Modules
 * found elsewhere are the system's, installed outside the agent's reach or not.
 */
export function modulesLoaded(
  name: string,
  args: (string | undefined)[],
  assigned: Readonly<Record<string, string>>,
): Named[] {
  const perl = /^perl/.test(name);
  if (!perl && !/^ruby/.test(name)) return [];
  const folders = searchFolders(perl ? (assigned['PERL5LIB'] ?? assigned['PERLLIB']) : assigned['RUBYLIB']);
  const modules: string[] = [];
  args.forEach((word, index) => {
    if (word === undefined) return;
    const value = (option: RegExp) => (option.test(word) ? args[index + 1] : undefined);
    const folder = /^-I(.+)$/s.exec(word)?.[1] ?? value(/^-I$/);
    if (folder !== undefined) folders.push(folder);
    // `perl -Mlib=a,b` is `use lib`: more folders.
    const lib = perl ? /^-Mlib=(.+)$/s.exec(word)?.[1] : undefined;
    if (lib !== undefined) folders.push(...lib.split(','));
    const module = perl
      ? (/^-[mM]-?([\w:]+)/.exec(word)?.[1] ?? /^-d:([\w:]+)/.exec(word)?.[1]?.replace(/^/, 'Devel::'))
      : (/^-r(.+)$/s.exec(word)?.[1] ?? value(/^-r$/));
    if (module === undefined || module === 'lib' || module.startsWith('.') || module.startsWith('/')) return;
    modules.push(
      perl ? `${module.replaceAll('::', '/')}.pm` : module.endsWith('.rb') ? module : `${module}.rb`,
    );
  });
  return folders.flatMap((folder) =>
    modules.map((module): Named => ({ path: join(folder, module), shell: false, ifFound: true })),
  );
}

/**
 * Variables that make a program load code, or run one, from where they say: those above, search
 * paths, zsh's start-up folder, git's configuration, and the programs git and others start.
 */
const CODE_VARIABLE =
  /^(BASH_ENV|NODE_OPTIONS|PYTHONPATH|PERL5LIB|PERLLIB|RUBYLIB|ZDOTDIR|GIT_CONFIG\w*|GIT_EXEC_PATH|GIT_DIR)=/;
/** npm's configuration from the environment (any case) that picks what runs its scripts, or where. */
const NPM_CONFIG = new RegExp(
  `^(npm_config_(${[...NPM_CODE_SETTINGS, ...NPM_PLACE_SETTINGS].join('|').replaceAll('-', '[-_]')}))=.`,
  'is',
);
/** Settings that turn git's configuration or hooks off, which name no code. */
const GIT_CONFIG_OFF = /^(GIT_CONFIG_NOSYSTEM=.*|GIT_CONFIG_(GLOBAL|SYSTEM)=\/dev\/null)$/s;
const PROGRAM_VARIABLE =
  /^(GIT_(EXTERNAL_DIFF|SSH|SSH_COMMAND|EDITOR|SEQUENCE_EDITOR|PAGER|ASKPASS|PROXY_COMMAND)|SSH_ASKPASS|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|BROWSER)=(.+)$/s;

/**
 * An assignment that adds to the value the variable already has (`PYTHONPATH=src:$PYTHONPATH`,
 * `NODE_OPTIONS="$NODE_OPTIONS --max-old-space-size=4096"`), as the text it adds: what it
 * inherits is the session's, which the command does not choose.
 */
function withInherited(word: Word): string | undefined {
  const first = word[0];
  const name = first && 'text' in first ? /^(\w+)=/.exec(first.text)?.[1] : undefined;
  if (name === undefined || !word.every((piece) => 'text' in piece || piece.computed === `$${name}`))
    return undefined;
  return word.map((piece) => ('text' in piece ? piece.text : '')).join('');
}

/** What variables assigned anywhere in the command make a program load (`BASH_ENV=x bash -c …`). */
export function loadedByVariables(words: SimpleCommand): Named[] {
  return words.flatMap((word): Named[] => {
    const text = literalText(word) ?? withInherited(word);
    if (text === undefined) {
      // Set to what only running tells (`PYTHONPATH=$(pwd)/lib`): where it leads is not known.
      const first = word[0];
      const name =
        first && 'text' in first
          ? (CODE_VARIABLE.exec(first.text) ?? LOADER_VARIABLES.exec(`${first.text}x`))?.[1]
          : undefined;
      return name === undefined
        ? []
        : [{ unread: `${name} is set to what only running tells`, shell: false, what: name }];
    }
    const shellStart = SHELL_START_VARIABLE.exec(text)?.[1];
    if (shellStart) return [{ path: shellStart, shell: true }];
    // zsh runs the start-up files of the folder ZDOTDIR names, even for `zsh -c`.
    const zdotdir = /^ZDOTDIR=(.+)$/s.exec(text)?.[1];
    if (zdotdir)
      return ['.zshenv', '.zshrc'].map((file): Named => ({
        path: join(zdotdir, file),
        shell: true,
        ifFound: true,
      }));
    // git's configuration from the environment may name any program git runs.
    const gitConfig = GIT_CONFIG_OFF.test(text)
      ? undefined
      : /^(GIT_CONFIG\w*|GIT_EXEC_PATH|GIT_DIR)=./s.exec(text)?.[1];
    if (gitConfig)
      return [
        {
          unread: `${gitConfig} configures git, whose configuration names programs it runs`,
          shell: false,
          what: gitConfig,
        },
      ];
    // A program run by its path: read as a script (`GIT_EXTERNAL_DIFF=./x.sh git diff`).
    const program = PROGRAM_VARIABLE.exec(text)?.[3]?.trim().split(/\s+/)[0];
    if (program?.includes('/')) return [{ path: program, shell: true, byPath: true }];
    const nodeOptions = NODE_OPTIONS.exec(text)?.[1];
    if (nodeOptions !== undefined) {
      const words = nodeOptions.split(/\s+/);
      return words.flatMap((word, index): Named[] => {
        const value = LOADS_CODE.has(word)
          ? words[index + 1]
          : /^--(?:require|import|loader|experimental-loader)=(.+)$/.exec(word)?.[1];
        return value !== undefined && looksLikeAFile(value) ? [{ path: value, shell: false }] : [];
      });
    }
    // Python imports these at its start, from any folder of its search path.
    const pythonPath = /^PYTHONPATH=(.*)$/s.exec(text)?.[1];
    if (pythonPath !== undefined)
      return searchFolders(pythonPath).flatMap((folder) =>
        ['sitecustomize.py', 'usercustomize.py'].map((file): Named => ({
          path: join(folder, file),
          shell: false,
          ifFound: true,
        })),
      );
    const loader = (LOADER_VARIABLES.exec(text) ?? NPM_CONFIG.exec(text))?.[1];
    return loader
      ? [{ unread: `${loader} loads code into the program that runs`, shell: false, what: loader }]
      : [];
  });
}

/**
 * The first variable an environment file sets (Node's `--env-file`, yarn's `.env.yarn`, bun's
 * `.env`) that makes a program load code (`NODE_OPTIONS=--require …`), or run another (`PATH`,
 * `EDITOR=./x.sh`): the programs it starts inherit them all. `KEY=value`, `export KEY=value` or
 * `KEY: value`, quoted or not.
 */
export function codeLoadingVariable(text: string): string | undefined {
  for (const line of text.split(/\r\n|\r|\n/)) {
    const set = /^\s*(?:export\s+)?([A-Za-z_]\w*)\s*[=:]\s*(['"]?)(.*?)\2\s*$/s.exec(line);
    if (set && loadsCode(set[1]!, set[3]!)) return set[1];
  }
  return undefined;
}

/** Whether a variable set to `value` makes a program load code, or run a file, it does not show. */
function loadsCode(name: string, value: string): boolean {
  const assignment = `${name}=${value}`;
  if (name === 'NODE_OPTIONS') return nodeOptionsLoadCode(value);
  const program = PROGRAM_VARIABLE.exec(assignment)?.[3]?.trim().split(/\s+/)[0];
  if (program !== undefined) return program.includes('/');
  return [CODE_VARIABLE, LOADER_VARIABLES, NPM_CONFIG, /^PATH=/].some((pattern) => pattern.test(assignment));
}

/** Whether Node's options load a module before the program's own (`--require`, `--import`, `-r`). */
export function nodeOptionsLoadCode(options: string): boolean {
  return options
    .split(/\s+/)
    .some(
      (word) => LOADS_CODE.has(word) || /^(--(require|import|loader|experimental-loader)=|-r.)/s.test(word),
    );
}
