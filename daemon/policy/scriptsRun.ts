import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
} from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import {
  ASSIGNMENT,
  commandWords,
  endsHereDocument,
  literalText,
  writtenByRedirect,
  type SimpleCommand,
} from './commandWords.ts';
import { LONG_COMMAND_BYTES } from './policy.ts';
import { MAX_LINKS } from './realPath.ts';

/**
 * A script file a command runs: `bash deploy.sh`, `python3 tools/x.py`, `. ./env.sh`,
 * `./deploy`, `awk -f x.awk`, `patch -i x.diff`. Its text is what runs, not the command's words:
 * a phone is shown it, and self-protection reads it as it reads the command.
 */
export interface RunScript {
  /** As the command names it, made absolute from the folder it runs in. */
  path: string;
  /** Undefined when it could not be read whole: `unread` says why. */
  text?: string;
  unread?: string;
  /** Run by a shell, so read as shell commands; else it is another language's code. */
  shell: boolean;
  /** A patch the command applies: the files its headers name are written. */
  patch?: true;
  /** Which of the file's parts run, when not all of it: `the script "test"` of a package.json. */
  part?: string;
}

/** The most read of one script: a phone shows far less (LIMITS.detailBytes), and says it was cut. */
export const MOST_SCRIPT_BYTES = 64 * 1024;
/** The most scripts read for one command: more is more than a person writes in one. */
const MOST_SCRIPTS = 4;

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'busybox', 'csh', 'tcsh']);
const INTERPRETER =
  /^(python[\d.]*|pypy[\d.]*|node|nodejs|perl[\d.]*|ruby[\d.]*|php[\d.]*|tsx|ts-node|bun|deno|lua[\d.]*|luajit|Rscript|tclsh[\d.]*|wish[\d.]*|expect|julia|raku|elixir|groovy|osascript|pwsh|powershell)$/;
/** Words that run the program after them: `sudo bash x.sh`, `timeout 60 python3 x.py`. */
const WRAPPERS = new Set([
  ...['sudo', 'doas', 'env', 'nohup', 'exec', 'command', 'builtin', 'time', 'nice', 'ionice', 'chrt'],
  ...['taskset', 'numactl', 'timeout', 'setsid', 'stdbuf', 'unbuffer', 'flock', 'xargs', 'parallel'],
  ...['watch', 'systemd-run', 'nsenter', 'unshare', 'chroot', 'strace', 'ltrace', 'firejail', 'bwrap'],
  ...['faketime', 'caffeinate', 'chronic', 'torsocks', 'proxychains', 'proxychains4', 'setpriv', 'screen'],
  ...['runuser'],
]);
/**
 * A project's runners, and their words for running (`uv run`, `npm exec`, `pnpm dlx`): the
 * program they run, or the code file they are given (`uv run x.py`, `npx tsx x.ts`). What else
 * they run (`npm test`, `uv run pytest`) comes from the project's own configuration.
 */
const RUNNERS = new Set([
  ...['npx', 'pnpx', 'bunx', 'npm', 'pnpm', 'yarn', 'uv', 'uvx', 'poetry', 'pipenv', 'pdm', 'hatch'],
  ...['rye', 'pipx', 'conda', 'mamba', 'micromamba', 'mise', 'asdf', 'direnv', 'dotenv', 'doppler'],
  ...['aws-vault', 'op', 'corepack', 'volta', 'fnm'],
]);
const RUNNING_WORDS = new Set(['run', 'exec', 'x', 'dlx', '--']);
/**
 * Runners that run a project's package.json scripts: `npm test` its `pretest`, `test` and
 * `posttest`, `npm run x` and `yarn x` the script `x` (with its `prex` and `postx`), an install
 * the project's own install scripts. A runner that runs a package's program (`npm exec`) runs
 * none of them.
 */
const PACKAGE_RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const RUNS_A_SCRIPT = new Set(['run', 'run-script', 'rum', 'urn']);
const RUNS_A_PROGRAM = new Set(['exec', 'x', 'dlx', '--']);
/** Each command and the scripts it runs, by npm's names and aliases (`npm i`, `npm cit`). */
const INSTALLS = ['install', 'prepare', 'prepublish'];
const SCRIPTS_OF_COMMAND: Record<string, readonly string[]> = {
  ...commandsRunning(['t', 'tst', 'test'], ['test']),
  ...commandsRunning(
    [
      ...[
        'install',
        'i',
        'in',
        'ins',
        'inst',
        'insta',
        'instal',
        'isnt',
        'isnta',
        'isntal',
        'isntall',
        'add',
      ],
      ...['ci', 'clean-install', 'ic', 'install-clean', 'isntall-clean', 'link', 'ln', 'rebuild', 'rb'],
      ...['update', 'up', 'upgrade', 'udpate', 'uninstall', 'un', 'unlink', 'remove', 'rm', 'r'],
    ],
    INSTALLS,
  ),
  ...commandsRunning(
    ['it', 'install-test', 'cit', 'clean-install-test', 'sit', 'install-ci-test'],
    [...INSTALLS, 'test'],
  ),
  pack: ['pack', 'prepare'],
  publish: ['publish', 'pack', 'prepare', 'prepublishOnly'],
  restart: ['restart', 'stop', 'start'],
};
function commandsRunning(commands: readonly string[], scripts: readonly string[]) {
  return Object.fromEntries(commands.map((command) => [command, scripts]));
}
/**
 * A runner's options that pick another package than the folder's (a workspace, a prefix, a
 * filter over many), or another program to run its scripts with; and its commands that do.
 */
const PICKS_PACKAGE =
  /^(--prefix|-w|-ws|--workspaces?|--ws|--filter|-F|-r|--recursive|--dir|--script-shell|--node-options|--userconfig)(=.*)?$/s;
const PICKS_PACKAGES = new Set(['workspace', 'workspaces', 'recursive', 'm', 'multi']);
/**
 * A runner's options known to take no value: one letter, or a long option Latch knows. Any other,
 * not written `--name=value`, may take the word after it, which is then no command.
 */
const RUNNER_FLAG =
  /^(-[a-zA-Z]|--?[\w-]+=.*|--(silent|quiet|verbose|if-present|ignore-scripts|foreground-scripts|offline|prefer-offline|prefer-online|frozen-lockfile|immutable|production|prod|dev|json|parseable|long|yes|force|dry-run|stream|parallel|no-[\w-]+))$/s;
/**
 * Programs that run code a project keeps in its own files: tasks, tests, builds, installs of
 * the project, packages' programs from its node_modules. What they run is not read.
 */
const RUNS_PROJECT_CODE = new Set([
  ...['just', 'task', 'rake', 'mise', 'composer', 'pdm', 'rye', 'hatch', 'poe', 'invoke', 'nox', 'tox'],
  ...['pytest', 'py.test', 'cargo', 'go', 'gradle', 'gradlew', 'mvn', 'mvnw', 'bundle', 'ant', 'sbt'],
  ...['dotnet', 'cmake', 'meson', 'bazel', 'pip', 'pip3', 'pipx', 'poetry', 'uv', 'npx', 'bunx', 'pnpx'],
  ...['npm', 'pnpm', 'yarn'],
]);
/** make, by the names it goes by. */
const MAKES = new Set(['make', 'gmake', 'bmake', 'pmake', 'remake', 'colormake', 'mingw32-make']);
/** A wrapper's option that runs the program in another folder. */
const CHANGES_FOLDER = /^(-C|-D|--chdir(=.*)?|--directory(=.*)?|--working-directory(=.*)?|--cwd(=.*)?)$/s;
/** A file a runner is given that is code to run, by its extension: a shell's, or another language's. */
const CODE_FILE =
  /\.(sh|bash|zsh|py|js|mjs|cjs|ts|mts|cts|tsx|jsx|rb|pl|pm|php|lua|r|jl|tcl|exs|go|java|kt|kts|swift|rs|ps1|sql|awk|vim|mk)$/i;
const SHELL_FILE = /\.(sh|bash|zsh)$/i;
/**
 * An interpreter's options after which its code is in the command itself, or it runs none: no
 * script file. A shell's is `-c`, alone or among other letters (`-lc`).
 */
const INLINE = new Set(['-c', '-e', '-E', '-p', '--eval', '--print', '--version', '--help', '-V', '-h']);
/** Options after which an interpreter runs no code at all. */
const RUNS_NO_CODE = new Set(['--test', '--run', '--v8-options', '--completion-bash', '--check']);
/** An interpreter's own words before the file it runs (`deno run x.ts`, `bun test x.ts`, `tsx watch x.ts`). */
const RUNNING_SUBCOMMANDS: Record<string, ReadonlySet<string>> = {
  deno: new Set(['run', 'test', 'bench']),
  bun: new Set(['run', 'test']),
  tsx: new Set(['watch']),
};
/** Options that take the next word as their value, which is no script: a shell's, then others'. */
const SHELL_OPTION_WITH_VALUE = new Set(['-o', '+o', '-O', '+O']);
const OPTION_WITH_VALUE = new Set([
  ...[
    '-W',
    '-X',
    '--env-file',
    '--env-file-if-exists',
    '--config',
    '--import-map',
    '--lock',
    '--conditions',
    '--title',
  ],
  ...['--inspect-port', '--watch-path', '--input-type', '--disable-warning', '--tsconfig', '--project'],
]);
/** Options that load code from the file they name before the script (`node -r ./setup.js x.js`). */
const LOADS_CODE = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader']);
/** A shell's start-up file, which it runs first: `bash --rcfile f -i`. */
const SHELL_START_FILE = new Set(['--rcfile', '--init-file']);
/**
 * Variables that make a program load code before its own: bash's start-up script (sh reads
 * `ENV` only when interactive), Node's options (its `--require`), and what is loaded into any
 * program or interpreter, which Latch cannot show.
 */
const SHELL_START_VARIABLE = /^BASH_ENV=(.+)$/s;
const NODE_OPTIONS = /^NODE_OPTIONS=(.*)$/s;
const LOADER_VARIABLES =
  /^(LD_PRELOAD|LD_AUDIT|PERL5OPT|PERL5DB|RUBYOPT|PYTHONSTARTUP|PYTHONHOME|PYTHONUSERBASE|NODE_PATH|JAVA_TOOL_OPTIONS|MAKEFILES)=./s;
/**
 * Programs that run code from a file an option names (`awk -f x.awk`, `vim -S x.vim`,
 * `sqlite3 -init x.sql`, `at -f x.sh`, `patch -i x.diff`): read as another language's code
 * (a shell's for `at` and `batch`, a patch's for `patch`).
 */
const PROGRAM_FILE_OPTIONS: Record<string, FileOptions> = {
  awk: { combines: true, options: ['-f', '--file', '-i', '--include', '-E', '--exec'], shell: false },
  gawk: { combines: true, options: ['-f', '--file', '-i', '--include', '-E', '--exec'], shell: false },
  mawk: { combines: true, options: ['-f'], shell: false },
  nawk: { combines: true, options: ['-f'], shell: false },
  sed: { combines: true, options: ['-f', '--file'], shell: false },
  gsed: { combines: true, options: ['-f', '--file'], shell: false },
  vim: { options: ['-S', '-s', '-u'], shell: false },
  vi: { options: ['-S', '-s', '-u'], shell: false },
  nvim: { options: ['-S', '-s', '-u'], shell: false },
  view: { options: ['-S', '-s', '-u'], shell: false },
  ex: { options: ['-S', '-u'], shell: false },
  sqlite3: { options: ['-init', '--init'], shell: false },
  at: { options: ['-f'], shell: true },
  batch: { options: ['-f'], shell: true },
  patch: { options: ['-i', '--input'], shell: false, patch: true },
  gdb: { options: ['-x', '--command', '-ix'], shell: false },
  psql: { options: ['-f', '--file'], shell: false },
};
/** A program's options that name a file of its code; `combines` when short flags join (`sed -nf x`). */
type FileOptions = { options: readonly string[]; shell: boolean; patch?: true; combines?: true };

/**
 * Programs whose every argument naming a file may be code they run: a file after `<` is one of
 * the command's words (`sqlite3 x.db < x.sql`, `at now < x.sh`, `patch -p1 < x.diff`), and
 * crontab's takes its plainly. sqlite3's and ed's first is the file they work on. A patch given
 * by none of its words is its input (`cat x.diff | patch -p1`), which Latch cannot read.
 */
const READS_FILES_GIVEN: Record<string, FilesGiven> = {
  sqlite3: { shell: false, afterFirst: true },
  ed: { shell: false, afterFirst: true },
  at: { shell: true },
  batch: { shell: true },
  crontab: { shell: true },
  patch: {
    shell: false,
    patch: true,
    valued: ['-d', '--directory', '-o', '--output', '-r', '-B', '-D', '-F', '-V', '-z', '-Y', '-g'],
  },
};
/**
 * How a program takes files of code: as shell or other code, as patches, after the file it works
 * on; `valued`, its options whose value is no such file.
 */
type FilesGiven = { shell: boolean; patch?: true; afterFirst?: true; valued?: readonly string[] };
/** Options of `patch` and `git apply` after which nothing is written. */
const PATCH_ONLY_LOOKS = new Set(['--dry-run', '--check', '--stat', '--numstat', '--summary']);
/** `git am` going on with, or leaving, the patches it already holds. */
const AM_HELD = new Set(['--continue', '--skip', '--abort', '--quit', '--resolved', '--show-current-patch']);
/** `vim -u NONE`: no file. */
const NO_FILE = new Set(['NONE', 'NORC', 'NOPLUGIN']);

/**
 * A file one simple command runs code from, as written: `byPath` when it is the program,
 * `ifFound` when a word may name one or not (a module, an argument). Or code it cannot read,
 * `what` saying whose.
 */
type Named =
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

/**
 * The scripts `command` runs, read from where it runs (`cwd`, then where its `cd`s lead), with
 * `variables` as the shell would expand them. Each is read at most MOST_SCRIPT_BYTES, only when
 * it is a regular file, and without waiting (a FIFO in its place is not read). What it cannot
 * read, it says so: the call is then asked at critical risk (gate/requestDetails.ts).
 */
export function scriptsRun(
  command: string,
  cwd: string | undefined,
  variables: Readonly<Record<string, string>>,
): RunScript[] {
  const found = new Map<string, RunScript>();
  // Longer than a phone shows, a command is asked at critical risk, and not read as words.
  if (utf8Length(command) > LONG_COMMAND_BYTES) return [];
  let folder = cwd !== undefined && isAbsolute(cwd) ? cwd : undefined;
  // Files an earlier part of the command may write: read now, they would show what was there.
  const mayBeWritten = new Set<string>();
  const expands = EXPANDS.test(command);
  // `$PWD` is the folder the command starts in, not the daemon's.
  for (const words of commandWords(command, folder ? { ...variables, PWD: folder } : variables)) {
    const moved = folderAfter(words, folder, variables);
    if (moved !== false) {
      folder = moved;
      continue;
    }
    const writes = filesItMayWrite(words);
    for (const named of scriptsNamed(words, expands)) {
      if ('unread' in named) {
        found.set(named.what, { path: named.what, unread: named.unread, shell: named.shell });
        continue;
      }
      const written = isAbsolute(named.path) ? named.path : folder && resolve(folder, named.path);
      const path =
        written !== undefined && named.packageScripts ? (nearestPackageJson(written) ?? written) : written;
      if (path === undefined) {
        if (!named.ifFound && !named.byPath)
          found.set(named.path, {
            path: named.path,
            unread: 'its folder is one only running tells',
            shell: named.shell,
          });
        continue;
      }
      // One package.json may be read for different scripts (`npm test && npm run build`).
      const key = named.packageScripts ? `${path} ${named.packageScripts.join(' ')}` : path;
      if (found.has(key)) continue;
      // More than a person writes in one command is not read, and said so: never passed over.
      if (found.size >= MOST_SCRIPTS) {
        found.set(key, {
          path,
          unread: `more than the ${MOST_SCRIPTS} scripts Latch reads of one command`,
          shell: named.shell,
        });
        return [...found.values()];
      }
      const read = named.packageScripts
        ? scriptsOfPackage(path, readScript(path), named.packageScripts)
        : named.envFile
          ? nodeOptionsSet(readScript(path))
          : readScript(path);
      // A word that may name a file and does not (an installed module, a time for `at`, a
      // query), or names a folder or a binary (a database), is no code to show; nor a program
      // run by its path that is a binary, or missing.
      const notCode = read.text?.includes('\0') || (read.unread !== undefined && NOT_CODE.has(read.unread));
      if ((named.ifFound || named.byPath) && notCode) continue;
      if (named.byPath && read.unread !== undefined) continue;
      const shell = named.byPath ? shebangIsShell(read.text ?? '') : named.shell;
      if (mayBeWritten.has(path))
        found.set(key, { path, unread: 'the command may write it before it runs it', shell });
      else found.set(key, { path, ...read, shell, ...(named.patch ? { patch: true } : {}) });
    }
    if (folder !== undefined) for (const written of writes) mayBeWritten.add(resolve(folder, written));
  }
  return [...found.values()];
}

/** Programs that may write the files they are given (`cp x.sh y.sh`, `sed -i`, `git checkout x.sh`). */
const WRITERS = new Set([
  ...['cp', 'mv', 'install', 'ln', 'tee', 'dd', 'rsync', 'sed', 'gsed', 'perl', 'patch', 'git', 'curl'],
  ...['wget', 'unzip', 'tar', 'truncate', 'sponge', 'gawk', 'ed', 'ex', 'vim', 'vi', 'nvim'],
]);

/** The files one simple command may write: what a `>` names, and what a writer is given. */
function filesItMayWrite(words: SimpleCommand): string[] {
  const writer = WRITERS.has(basename(literalText(words[0] ?? []) ?? ''));
  return words.flatMap((word, index) => {
    const text = literalText(word);
    return text !== undefined && index > 0 && (writtenByRedirect(word) || writer)
      ? [text.replace(/^[^=/]+=/, '')]
      : [];
  });
}

/**
 * Whether a command may run code Latch cannot know from its words, read or not: a script, a
 * shell, an interpreter or `eval` as the program (past wrappers and runners), one only running
 * names, or a program started with variables of the command's. No rule for calls like it is
 * offered or applies: the next run may hold anything.
 */
export function mayRunOtherCode(command: string, variables: Readonly<Record<string, string>>): boolean {
  if (utf8Length(command) > LONG_COMMAND_BYTES) return true;
  return commandWords(command, variables).some((words) => {
    if (scriptsNamed(words, EXPANDS.test(command)).length > 0) return true;
    const texts = words.map(literalText);
    // A code file any program is given may be what it runs (`go run x.go`, `pytest x.py`).
    if (texts.some((text) => text !== undefined && CODE_FILE.test(text))) return true;
    const program = programAt(texts);
    // The environment a program starts with may choose the code it runs (`PATH=/tmp/x ls`, a
    // loader's or a pager's variable), and no list holds every program's variables.
    const head = texts.slice(0, program && 'at' in program ? program.at : texts.length);
    if (head.some((text) => text !== undefined && ASSIGNMENT.test(text))) return true;
    // A project's tasks, tests, builds and installs run code kept in its files (`rake`,
    // `pip install -e .`, `npx eslint` from its node_modules), which Latch does not read.
    if (
      texts
        .slice(0, program && 'at' in program ? program.at + 1 : texts.length)
        .some((text) => text !== undefined && RUNS_PROJECT_CODE.has(basename(text)))
    )
      return true;
    if (program === undefined || !('at' in program)) return false;
    const name = texts[program.at];
    if (name !== undefined && basename(name) === 'git' && configuresGit(texts.slice(program.at + 1)))
      return true;
    return name === undefined || runsCode(basename(name)) || basename(name) === 'eval';
  });
}

/**
 * The configuration git is given before its command: each `-c` setting (undefined where only
 * running tells), and whether any comes from elsewhere (`--config-env`, `--exec-path`). Its
 * configuration names programs it runs (`core.fsmonitor`, `core.pager`, `alias.x=!…`).
 */
function gitConfiguration(args: (string | undefined)[]): {
  settings: (string | undefined)[];
  fromElsewhere: boolean;
} {
  const settings: (string | undefined)[] = [];
  for (let at = 0; at < args.length; at++) {
    const arg = args[at];
    if (arg === undefined || /^--(config-env|exec-path)(=|$)/.test(arg))
      return { settings, fromElsewhere: true };
    if (!arg.startsWith('-')) break;
    if (arg === '-c') settings.push(args[++at]);
    else if (arg === '-C' || arg === '--git-dir' || arg === '--work-tree' || arg === '--namespace') at++;
  }
  return { settings, fromElsewhere: false };
}

function configuresGit(args: (string | undefined)[]): boolean {
  const { settings, fromElsewhere } = gitConfiguration(args);
  return fromElsewhere || settings.length > 0;
}

/**
 * The code git's `-c` settings name: a program by its path, read as a script
 * (`-c core.fsmonitor=./x.sh`); folders and files of settings or hooks, said unread.
 */
function gitConfigured(args: (string | undefined)[]): Named[] {
  const { settings, fromElsewhere } = gitConfiguration(args);
  const unread = (why: string): Named => ({ unread: why, shell: true, what: "git's configuration" });
  return [
    ...(fromElsewhere ? [unread('git is configured from where only running tells')] : []),
    ...settings.flatMap((setting): Named[] => {
      const [, key, value] = /^([^=]+)=(.*)$/s.exec(setting ?? '') ?? [];
      if (setting === undefined) return [unread('a setting only running tells')];
      if (key === undefined || value === undefined) return [];
      if (/^(core\.hookspath|include\.path|includeif\..*\.path)$/i.test(key))
        return [unread(`${key} names files git runs or reads`)];
      const program = value.trim().replace(/^!/, '').split(/\s+/)[0]!;
      return program.includes('/') ? [{ path: program, shell: true, byPath: true }] : [];
    }),
  ];
}

/** Where a `cd` or `pushd` leads (undefined: only running tells), or false for any other command. */
function folderAfter(
  words: SimpleCommand,
  folder: string | undefined,
  variables: Readonly<Record<string, string>>,
): string | undefined | false {
  const texts = words.map(literalText);
  if (texts[0] !== 'cd' && texts[0] !== 'pushd') return false;
  const [to, ...rest] = texts
    .slice(1)
    .filter((text) => text === undefined || text === '-' || !text.startsWith('-'));
  if (to === undefined && rest.length === 0 && texts.slice(1).every((text) => text !== undefined))
    return variables['HOME'];
  if (to === undefined || to === '-') return undefined;
  return isAbsolute(to) ? to : folder && resolve(folder, to);
}

/**
 * The program a simple command runs, past its assignments, wrappers (`sudo -u me`, `timeout 60`)
 * and runners (`uv run`, `npx`): its word's index; or, where a wrapper names no program but by
 * a path, each word with a slash (`flock /tmp/l ./x.sh`), or the code file a runner is given;
 * undefined when it runs nothing (`command -v bash`, `npm test`).
 */
function programAt(
  texts: (string | undefined)[],
): (({ at: number } | { files: Named[] }) & { elsewhere: boolean }) | undefined {
  let at = texts.findIndex((text) => text === undefined || !ASSIGNMENT.test(text));
  // A wrapper may run it in another folder (`env -C dir`, `sudo -D dir`, `uv run --directory`).
  let elsewhere = false;
  while (at >= 0 && at < texts.length) {
    const text = texts[at];
    if (text === undefined) return { at, elsewhere };
    // A runner may name a version of what it runs: `npx pnpm@9 build`.
    const name = basename(text).replace(/(?<=.)@[\w.^~-]*$/, '');
    if (name === 'command' && /^-[vV]$/.test(texts[at + 1] ?? '')) return undefined;
    const runner = RUNNERS.has(name);
    if (!runner && !WRAPPERS.has(name)) return { at, elsewhere };
    // The first word after it that is not one of its options, their values (a number, a path, a
    // word after a short option: `-u me`) or an assignment, or a runner's word for running.
    const after = texts.slice(at + 1);
    const next = after.findIndex((word, index) => {
      if (word === undefined || runsCode(basename(word)) || isKnownProgram(basename(word))) return true;
      const value =
        /^-\w$/.test(after[index - 1] ?? '') || /^\d[\d.]*[smhd]?$/.test(word) || word.includes('/');
      return !(word.startsWith('-') || ASSIGNMENT.test(word) || (runner ? RUNNING_WORDS.has(word) : value));
    });
    // Its own options, not the program's after them (`uv run make -C sub`).
    const own = next === -1 ? after : after.slice(0, next);
    if (own.some((word) => word !== undefined && CHANGES_FOLDER.test(word))) elsewhere = true;
    const scripts = PACKAGE_RUNNERS.has(name) ? packageScripts(name, after) : undefined;
    if (scripts !== undefined) return { files: scripts, elsewhere };
    const program = after[next];
    if (runner && program !== undefined && CODE_FILE.test(program))
      return { files: [{ path: program, shell: SHELL_FILE.test(program), ifFound: true }], elsewhere };
    // The program a wrapper or a runner runs, which may be another (`doppler run -- npm test`).
    if (next !== -1) {
      at += 1 + next;
      continue;
    }
    if (runner) return undefined;
    const paths = after.filter((word): word is string => word !== undefined && word.includes('/'));
    return { files: paths.map((path) => ({ path, shell: true, byPath: true })), elsewhere };
  }
  return undefined;
}

/** What a shell expands in a here-document whose end word is not quoted: `$x`, `$(…)`, backticks. */
const EXPANDS = /[$`]/;

/**
 * The files one simple command runs code from, as written, or the code it cannot read.
 * `expands`: the command holds what a shell expands, were it in a here-document.
 */
function scriptsNamed(words: SimpleCommand, expands: boolean): Named[] {
  const program = programAt(words.map(literalText));
  const named = [...scriptsOf(words, program, expands), ...interpreterFurtherOn(words, program, expands)];
  return program?.elsewhere ? inAnotherFolder(named) : named;
}

/** Run in a folder only running tells, a relative path may be any file. */
const inAnotherFolder = (named: Named[]): Named[] =>
  named.map((file) =>
    'path' in file && !isAbsolute(file.path)
      ? { unread: 'its folder is one only running tells', shell: file.shell, what: file.path }
      : file,
  );

/**
 * Past a wrapper or runner whose options may have been taken for its program
 * (`flock build.lock bash x.sh`, `uv run --with requests python x.py`): a shell or interpreter
 * further on, and the script it would run, if there is one.
 */
function interpreterFurtherOn(
  words: SimpleCommand,
  program: ReturnType<typeof programAt>,
  expands: boolean,
): Named[] {
  const texts = words.map(literalText);
  const first = texts.findIndex((text) => text === undefined || !ASSIGNMENT.test(text));
  const wrapped = WRAPPERS.has(basename(texts[first] ?? '')) || RUNNERS.has(basename(texts[first] ?? ''));
  const found = program && 'at' in program ? program.at : first;
  if (!wrapped || (program && 'at' in program && runsCode(basename(texts[found] ?? '')))) return [];
  const at = texts.findIndex(
    (text, index) =>
      index > found && text !== undefined && (SHELLS.has(basename(text)) || INTERPRETER.test(basename(text))),
  );
  if (at === -1) return [];
  const files = interpreterScripts(
    basename(texts[at]!),
    words.slice(at + 1),
    expands,
    assignedIn(texts),
  ).flatMap((file): Named[] => ('path' in file ? [{ ...file, ifFound: true }] : []));
  // `uv run --directory x python y.py`: an option whose value was taken for the program.
  const elsewhere = texts.slice(first, at).some((text) => text !== undefined && CHANGES_FOLDER.test(text));
  return elsewhere ? inAnotherFolder(files) : files;
}

function scriptsOf(words: SimpleCommand, program: ReturnType<typeof programAt>, expands: boolean): Named[] {
  const texts = words.map(literalText);
  const named: Named[] = [...loadedByVariables(words)];
  if (program === undefined) return named;
  if ('files' in program) return [...named, ...program.files];
  const { at } = program;
  const text = texts[at];
  if (text === undefined) return named; // a program only running names: outside the vocabulary
  const name = basename(text);
  const args = texts.slice(at + 1);
  if (name === 'source' || name === '.') {
    // With no word it reads, it was given one only running makes (`. <(cat x.sh)`).
    const path = args[0];
    return [...named, path === undefined ? unreadScript(name, true) : { path, shell: true }];
  }
  if (name === 'eval')
    return args.some((arg) => arg === undefined)
      ? [...named, { unread: 'it runs code only running tells', shell: true, what: 'eval' }]
      : named;
  if (runsCode(name))
    return [...named, ...interpreterScripts(name, words.slice(at + 1), expands, assignedIn(texts))];
  if (name === 'find') return [...named, ...findExecs(words.slice(at + 1), expands)];
  if (name === 'git') return [...named, ...gitConfigured(args), ...gitPatches(args)];
  if (MAKES.has(name)) return [...named, ...makefiles(args)];
  if (name === 'patch' && args.some((arg) => arg !== undefined && PATCH_ONLY_LOOKS.has(arg))) return named;
  const fileOptions = PROGRAM_FILE_OPTIONS[name];
  const given = READS_FILES_GIVEN[name];
  const files = [
    ...(fileOptions ? optionFiles(args, fileOptions) : []),
    ...(given ? filesGiven(args, given, fileOptions?.options ?? []) : []),
    ...(name === 'sqlite3' ? sqliteReads(args) : []),
  ];
  // `patch -d dir` applies in that folder, from which its relative files are read.
  const patchElsewhere =
    name === 'patch' && args.some((arg) => arg === '-d' || arg?.startsWith('--directory'));
  if (name === 'patch' && files.length === 0) named.push(PATCH_FROM_INPUT("patch's input"));
  else named.push(...(patchElsewhere ? inAnotherFolder(files) : files));
  if (text.includes('/')) named.push({ path: text, shell: true, byPath: true });
  return named;
}

/**
 * The package.json scripts a package runner runs (`npm test`, `yarn build`, `pnpm run x`), given
 * the words after it, read from the folder's package.json if it holds them; undefined when it
 * runs a program instead (`npm exec x`, `yarn node x.js`, `bun x.ts`).
 */
function packageScripts(runner: string, args: (string | undefined)[]): Named[] | undefined {
  const unread = (why: string): Named[] => [{ unread: why, shell: true, what: 'package.json' }];
  if (args.some((word) => word !== undefined && PICKS_PACKAGE.test(word)))
    return unread('an option picks the package, or what runs its scripts');
  if (args.some((word) => word !== undefined && CHANGES_FOLDER.test(word)))
    return unread('its folder is one only running tells');
  const at = args.findIndex((word) => word === undefined || !word.startsWith('-'));
  const command = at === -1 ? undefined : args[at];
  // An option before the command (or the script run) may have taken a word: Latch does not guess.
  const unknownOption = (words: (string | undefined)[]) =>
    words.some((word) => word !== undefined && word.startsWith('-') && !RUNNER_FLAG.test(word));
  if (unknownOption(at === -1 ? args : args.slice(0, at)))
    return unread('an option Latch does not know may take the word after it');
  // Alone, yarn installs; the others say how they are used.
  if (at === -1) return runner === 'yarn' && args.length === 0 ? [packageFile(INSTALLS)] : [];
  if (command === undefined) return [unreadScript(runner, true)];
  if (PICKS_PACKAGES.has(command)) return unread('its command picks the packages');
  if (RUNS_A_PROGRAM.has(command) || runsCode(basename(command)) || CODE_FILE.test(command)) return undefined;
  const scripts = SCRIPTS_OF_COMMAND[command] ?? [command];
  // With no start script, npm runs `node server.js`: its code is read too.
  if (scripts.includes('start'))
    return [packageFile(scripts), { path: 'server.js', shell: false, ifFound: true }];
  if (!RUNS_A_SCRIPT.has(command)) return [packageFile(scripts)];
  const rest = args.slice(at + 1);
  const scriptAt = rest.findIndex((word) => word === undefined || !word.startsWith('-'));
  if (unknownOption(scriptAt === -1 ? rest : rest.slice(0, scriptAt)))
    return unread('an option Latch does not know may take the word after it');
  if (scriptAt === -1) return [];
  const script = rest[scriptAt];
  return script === undefined ? [unreadScript(runner, true)] : [packageFile([script])];
}

/** The folder's package.json, for these scripts and the `pre` and `post` scripts each brings. */
const packageFile = (scripts: readonly string[]): Named => ({
  path: 'package.json',
  shell: true,
  ifFound: true,
  packageScripts: scripts.flatMap((script) => [`pre${script}`, script, `post${script}`]),
});

/**
 * The makefile make reads, whose recipes are shell commands: the one `-f` names, else
 * `GNUmakefile`, `makefile` or `Makefile` (each that is there), in the folder `-C` names.
 */
function makefiles(given: (string | undefined)[]): Named[] {
  // getopt takes any start of a long option that names one only (`--fil=x`, `--dir x`).
  const args = given.map((word) => {
    const long = /^--([\w-]+)(=.*)?$/s.exec(word ?? '');
    const full = long && ['file', 'makefile', 'directory'].find((name) => name.startsWith(long[1]!));
    return full && long[1]!.length >= (full === 'makefile' ? 3 : 2) ? `--${full}${long[2] ?? ''}` : word;
  });
  const folders = optionFiles(args, { options: ['-C', '--directory'], shell: true, combines: true });
  const named = optionFiles(args, { options: ['-f', '--file', '--makefile'], shell: true, combines: true });
  if (folders.some((folder) => 'unread' in folder) || folders.length > 1)
    return [{ unread: 'its folder is one only running tells', shell: true, what: 'the makefile' }];
  if (named.some((file) => 'path' in file && file.path === '-'))
    return [{ unread: 'it reads the makefile its input holds', shell: true, what: "make's input" }];
  const folder = folders[0] && 'path' in folders[0] ? folders[0].path : '';
  const files = named.length > 0 ? named : ['GNUmakefile', 'makefile', 'Makefile'].map((path) => ({ path }));
  return files.map((file): Named =>
    'path' in file ? { path: join(folder, file.path), shell: true, ifFound: true } : file,
  );
}

const PATCH_FROM_INPUT = (what: string): Named => ({
  unread: 'it applies the patch its input holds, which is not known before it runs',
  shell: false,
  what,
});

const unreadScript = (name: string, shell: boolean): Named => ({
  unread: 'its script is a value only running tells',
  shell,
  what: `${name}'s script`,
});

/**
 * A shell's or interpreter's script, the code its options load first, or its input when it
 * names none. `assigned`: the variables the command sets for it (`PYTHONPATH=lib`).
 */
function interpreterScripts(
  name: string,
  words: SimpleCommand,
  expands: boolean,
  assigned: Readonly<Record<string, string>>,
): Named[] {
  const args = words.map(literalText);
  if (name === 'pwsh' || name === 'powershell') return powershellScripts(args);
  if (name === 'bun' && args.some((word) => word !== undefined && CHANGES_FOLDER.test(word)))
    return [{ unread: 'its folder is one only running tells', shell: false, what: "bun's script" }];
  const shell = SHELLS.has(name);
  const python = /^(python|pypy)/.test(name);
  const named: Named[] = [...modulesLoaded(name, args, assigned)];
  // It runs files it finds, or none, rather than its input (`node --test`, `deno test`).
  let readsNoInput = false;
  for (let next = 0; next < args.length; next++) {
    const word = args[next];
    // Its input is a here-document (`python3 - <<'EOF'`): the code is in the command's own text,
    // unless a shell expands what it holds first (`<<EOF` with a `$(cat x.sh)` in it).
    if (endsHereDocument(words[next]!)) {
      const quoted = words[next]!.some((piece) => 'text' in piece && !piece.glob);
      return quoted || !expands
        ? named
        : [
            ...named,
            { unread: 'its here-document holds what only running tells', shell, what: `${name}'s input` },
          ];
    }
    if (word === undefined) return [...named, unreadScript(name, shell)];
    // php's -r is its code; node's and ruby's name a module to load first. -v is a version, but
    // a shell's and Python's verbose mode.
    const inline =
      INLINE.has(word) ||
      (word === '-r' && name.startsWith('php')) ||
      (word === '-v' && !shell && !python) ||
      (/^(perl|ruby)/.test(name) && /^-[a-zA-Z]*[eE]$/.test(word)) ||
      (python && /^-[a-zA-Z]*c$/.test(word)) ||
      (/^node/.test(name) && /^-[a-zA-Z]*[ep]$/.test(word));
    if (shell ? /^(-[a-zA-Z]*c[a-zA-Z]*|--command|--version|--help)$/.test(word) : inline) {
      // The code itself only running tells: `bash -c "$(curl …)"`.
      const code = next + 1 < args.length ? args[next + 1] : '';
      return code === undefined
        ? [...named, { unread: 'it runs code only running tells', shell, what: `${name}'s code` }]
        : named;
    }
    if (!shell && RUNS_NO_CODE.has(word)) readsNoInput = true;
    const module = python ? (word === '-m' ? args[next + 1] : /^-m(.+)$/.exec(word)?.[1]) : undefined;
    if (python && (word === '-m' || module !== undefined)) {
      if (module === undefined)
        return word === '-m' && next + 1 < args.length ? [...named, unreadScript(name, false)] : named;
      const file = module.replaceAll('.', '/');
      const folders = ['', ...searchFolders(assigned['PYTHONPATH'])];
      return [
        ...named,
        ...folders.flatMap((folder) =>
          [`${file}.py`, `${file}/__main__.py`, `${file}/__init__.py`].map((path): Named => ({
            path: join(folder, path),
            shell: false,
            ifFound: true,
          })),
        ),
      ];
    }
    const loads = !shell
      ? LOADS_CODE.has(word)
        ? args[next + 1]
        : /^(?:--(?:require|import|loader|experimental-loader)=|-r(?=[./]))(.+)$/s.exec(word)?.[1]
      : SHELL_START_FILE.has(word)
        ? args[next + 1]
        : undefined;
    if (loads !== undefined && (shell || looksLikeAFile(loads))) named.push({ path: loads, shell });
    const envFile = /^(node|tsx|ts-node)/.test(name)
      ? /^--env-file(?:-if-exists)?$/.test(word)
        ? args[next + 1]
        : /^--env-file(?:-if-exists)?=(.+)$/s.exec(word)?.[1]
      : undefined;
    if (envFile !== undefined) named.push({ path: envFile, shell: false, ifFound: true, envFile: true });
    if (
      LOADS_CODE.has(word) ||
      SHELL_START_FILE.has(word) ||
      (shell ? SHELL_OPTION_WITH_VALUE : OPTION_WITH_VALUE).has(word)
    )
      next++;
    else if (word === '-I' && !python) next++;
    else if (word.startsWith('-') || word.startsWith('+')) continue;
    else if (RUNNING_SUBCOMMANDS[name]?.has(word)) readsNoInput = word !== 'run';
    // deno's own commands (`deno fmt`) run what the project configures; bun's words are its
    // commands (`bun install`) or its package.json scripts (`bun run build`, `bun build`).
    else if (name === 'deno' && !word.includes('.') && !word.includes('/')) return named;
    else if (name === 'bun' && !word.includes('.') && !word.includes('/'))
      return [...named, ...(packageScripts(name, [word]) ?? [])];
    else return [...named, { path: word, shell }];
  }
  // No script named: it runs what its input holds (`cat x.sh | bash`, `curl … | python3 -`).
  if (readsNoInput) return named;
  return [
    ...named,
    {
      unread: 'it runs the code its input holds, which is not known before it runs',
      shell,
      what: `${name}'s input`,
    },
  ];
}

/**
 * PowerShell's script: the file `-File` names, or its first word that is no option. Its
 * parameters are matched by any start of their names, in any case (`-c`, `-Command`); an encoded
 * command is code no one reads, and one run in another folder (`-wd`) is said unread.
 */
function powershellScripts(args: (string | undefined)[]): Named[] {
  const is = (word: string, parameter: string, shortest: number) =>
    word.length > shortest && parameter.startsWith(word);
  for (let next = 0; next < args.length; next++) {
    const word = args[next]?.toLowerCase();
    if (word === undefined) return [unreadScript('pwsh', false)];
    if (is(word, '-command', 1))
      return args[next + 1] === undefined
        ? [{ unread: 'it runs code only running tells', shell: false, what: "pwsh's code" }]
        : [];
    if (is(word, '-encodedcommand', 1) || word === '-ec')
      return [{ unread: 'its code is encoded', shell: false, what: "pwsh's code" }];
    if (is(word, '-workingdirectory', 1) || word === '-wd')
      return [{ unread: 'its folder is one only running tells', shell: false, what: "pwsh's script" }];
    if (is(word, '-file', 1)) continue;
    if (
      /^-(ex|executionpolicy|settingsfile|configurationname|outputformat|of|inputformat|if|windowstyle|w|custompipename)/.test(
        word,
      )
    )
      next++;
    else if (!word.startsWith('-')) return [{ path: args[next]!, shell: false }];
  }
  return [
    {
      unread: 'it runs the code its input holds, which is not known before it runs',
      shell: false,
      what: "pwsh's input",
    },
  ];
}

/** What `find … -exec` (`-execdir`, `-ok`) runs, as a command of its own up to its `;` or `+`. */
function findExecs(words: SimpleCommand, expands: boolean): Named[] {
  const texts = words.map(literalText);
  return texts.flatMap((text, index) => {
    if (!/^-(exec|execdir|ok|okdir)$/.test(text ?? '')) return [];
    const end = texts.findIndex((word, after) => after > index && (word === ';' || word === '+'));
    return scriptsNamed(words.slice(index + 1, end === -1 ? undefined : end), expands);
  });
}

/** `git apply` and `git am`, past git's own options (`-C dir`, `-c key=value`): each patch given, or its input. */
function gitPatches(args: (string | undefined)[]): Named[] {
  let at = 0;
  while (at < args.length && (args[at] === undefined || args[at]!.startsWith('-')))
    at += args[at] === '-C' || args[at] === '-c' ? 2 : 1;
  if (args[at] !== 'apply' && args[at] !== 'am') return [];
  const rest = args.slice(at + 1);
  if (rest.some((arg) => arg !== undefined && (PATCH_ONLY_LOOKS.has(arg) || AM_HELD.has(arg)))) return [];
  const files = filesGiven(rest, { shell: false, patch: true }, []);
  if (files.length === 0) return [PATCH_FROM_INPUT(`git ${args[at]}'s input`)];
  // `git -C dir` applies in that folder, from which its relative files are read.
  return args.slice(0, at).includes('-C') ? inAnotherFolder(files) : files;
}

/** The files named after `options` (`-f x`, `-fx`, `--file=x`); one only running names is unread. */
function optionFiles(
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

/** Every word but an option or an option's value that names an existing file (but the first, for some). */
function filesGiven(
  args: (string | undefined)[],
  { afterFirst, valued = [], ...kind }: FilesGiven,
  fileOptions: readonly string[],
): Named[] {
  const files = args.filter(
    (word, index): word is string =>
      word !== undefined &&
      word !== '' &&
      !word.startsWith('-') &&
      ![...fileOptions, ...valued].includes(args[index - 1] ?? ''),
  );
  return files.slice(afterFirst ? 1 : 0).map((path) => ({ path, ...kind, ifFound: true }));
}

/** sqlite3's `.read FILE` given as an argument. */
function sqliteReads(args: (string | undefined)[]): Named[] {
  return args.flatMap((word): Named[] => {
    const path = /^\s*\.read\s+(\S+)/.exec(word ?? '')?.[1];
    return path ? [{ path: path.replace(/^(["'])(.*)\1$/, '$2'), shell: false }] : [];
  });
}

/** The variables one simple command sets, before its program or after `env`: `A=1 env B=2 x`. */
function assignedIn(texts: (string | undefined)[]): Record<string, string> {
  const assigned: Record<string, string> = {};
  for (const text of texts) {
    const name = text === undefined ? undefined : ASSIGNMENT.exec(text)?.[1];
    if (name !== undefined) assigned[name] = text!.slice(name.length + 1);
  }
  return assigned;
}

/** The folders of a search path (`lib:/opt/x`), the empty ones left out. */
const searchFolders = (value: string | undefined): string[] =>
  value === undefined ? [] : value.split(':').filter(Boolean);

/**
 * The files of the modules Perl's `-M` and `-m`, and Ruby's `-r`, load from the folders `-I`
 * and `PERL5LIB` or `RUBYLIB` add (`perl -Ilib -MSetup -e 1` loads `lib/Setup.pm`). Modules
 * found elsewhere are the system's, installed outside the agent's reach or not.
 */
function modulesLoaded(
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
  /^(BASH_ENV|NODE_OPTIONS|PYTHONPATH|PERL5LIB|PERLLIB|RUBYLIB|ZDOTDIR|GIT_CONFIG\w*|GIT_EXEC_PATH|GIT_EXTERNAL_DIFF|GIT_SSH|GIT_SSH_COMMAND|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_PAGER|GIT_ASKPASS|SSH_ASKPASS|GIT_PROXY_COMMAND|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|BROWSER)=/;
const PROGRAM_VARIABLE =
  /^(GIT_(EXTERNAL_DIFF|SSH|SSH_COMMAND|EDITOR|SEQUENCE_EDITOR|PAGER|ASKPASS|PROXY_COMMAND)|SSH_ASKPASS|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|BROWSER)=(.+)$/s;

/** What variables assigned anywhere in the command make a program load (`BASH_ENV=x bash -c …`). */
function loadedByVariables(words: SimpleCommand): Named[] {
  return words.flatMap((word): Named[] => {
    const text = literalText(word);
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
    const gitConfig = /^(GIT_CONFIG\w*|GIT_EXEC_PATH)=./s.exec(text)?.[1];
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
    const loader = LOADER_VARIABLES.exec(text)?.[1];
    return loader
      ? [{ unread: `${loader} loads code into the program that runs`, shell: false, what: loader }]
      : [];
  });
}

/** A file, not a package's name: `./setup.js`, `/opt/x.mjs`, `hooks/x.ts` (`dotenv/config` is a package). */
const looksLikeAFile = (value: string) =>
  value.startsWith('.') || value.startsWith('/') || CODE_FILE.test(value) || extname(value) === '.node';

/** Programs that are never an option's value: a wrapper's, a runner's, make, git. */
const isKnownProgram = (name: string) =>
  WRAPPERS.has(name) || RUNNERS.has(name) || PACKAGE_RUNNERS.has(name) || MAKES.has(name) || name === 'git';

const runsCode = (name: string) =>
  SHELLS.has(name) || INTERPRETER.test(name) || name === 'source' || name === '.';

/** A script run by its path: a shell runs it unless its `#!` line names another program. */
function shebangIsShell(text: string): boolean {
  const line = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(text);
  if (!line) return true;
  const program = basename(line[1]!) === 'env' && line[2] ? line[2] : line[1]!;
  return SHELLS.has(basename(program));
}

/**
 * The files a unified diff writes, by its headers (`--- a/x`, `+++ b/x`, `diff --git a/x b/x`,
 * `rename to x`): each as written and without each of its leading folders, since `patch -pN`
 * takes N of them away (`git apply`, one).
 */
export function patchedFiles(text: string): string[] {
  const files = new Set<string>();
  const add = (path: string) => {
    if (path === '/dev/null') return;
    const parts = path.split('/');
    for (let strip = 0; strip < parts.length; strip++) files.add(parts.slice(strip).join('/'));
  };
  for (const line of text.split('\n')) {
    const header =
      /^(?:---|\+\+\+) ([^\t\n]+)/.exec(line)?.[1] ?? /^(?:rename|copy) (?:from|to) (.+)$/.exec(line)?.[1];
    if (header !== undefined) add(header.trim());
    const git = /^diff --git (\S+) (\S+)$/.exec(line);
    if (git) for (const path of git.slice(1)) add(path);
  }
  return [...files];
}

/**
 * The package.json a package runner uses when told one in `path`'s folder: the nearest there or
 * above it, as npm, yarn, pnpm and bun look for theirs. None: the runner finds none either.
 */
function nearestPackageJson(path: string): string | undefined {
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    const file = join(folder, 'package.json');
    try {
      if (lstatSync(file, { throwIfNoEntry: false })) return file;
    } catch {
      return file; // not looked into: reading it says why
    }
    if (dirname(folder) === folder) return undefined;
  }
}

/** What is said of a file of which nothing runs: a package.json without the scripts run. */
const NOTHING_RUNS = 'nothing of it runs';
/** What reading a word that names no file, or a folder, says. */
const NOT_CODE = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG', 'a folder', NOTHING_RUNS]);

/**
 * Whether a path leads, by its name or a link on the way, into /proc or /dev: `/dev/fd/19`,
 * `/proc/self/fd/19`, a link to either. Read here, they would be the daemon's own open files and
 * folder, not what the agent's shell opens.
 */
function leadsThroughProcessViews(path: string): boolean {
  let rest = path.split('/').filter(Boolean);
  let at = '/';
  for (let links = 0; rest.length > 0;) {
    const next = join(at, rest.shift()!);
    if (next === '/proc' || next === '/dev' || next.startsWith('/proc/') || next.startsWith('/dev/'))
      return true;
    const found = lstatSync(next, { throwIfNoEntry: false });
    if (!found?.isSymbolicLink()) {
      at = next;
      continue;
    }
    if (++links > MAX_LINKS) return true;
    const target = readlinkSync(next);
    rest = [...target.split('/').filter(Boolean), ...rest];
    if (isAbsolute(target)) at = '/';
  }
  return false;
}

/**
 * The scripts of a package.json that run, in the order they run, each a line of shell commands;
 * `part` says which. One that does not parse is said unread: Latch does not guess what a runner
 * makes of it.
 */
function scriptsOfPackage(
  path: string,
  read: { text?: string; unread?: string },
  names: readonly string[],
): { text?: string; unread?: string; part?: string } {
  if (read.text === undefined) return read;
  let scripts: unknown;
  try {
    scripts = (JSON.parse(read.text.replace(/^\uFEFF/, '')) as { scripts?: unknown } | null)?.scripts;
  } catch {
    return { unread: 'not JSON Latch can read' };
  }
  const table: Record<string, unknown> = {
    // What npm runs when package.json names none: `node server.js`, `node-gyp rebuild`.
    ...(existsSync(join(dirname(path), 'server.js')) ? { start: 'node server.js' } : {}),
    ...(existsSync(join(dirname(path), 'binding.gyp')) ? { install: 'node-gyp rebuild' } : {}),
    ...(typeof scripts === 'object' && scripts !== null && !Array.isArray(scripts)
      ? (scripts as Record<string, unknown>)
      : {}),
  };
  const runs = names.filter((name) => Object.hasOwn(table, name) && typeof table[name] === 'string');
  if (runs.length === 0) return { unread: NOTHING_RUNS };
  return {
    text: runs.map((name) => `${table[name] as string}\n`).join(''),
    part: `${runs.length === 1 ? 'the script' : 'the scripts'} ${runs.map((name) => `"${name}"`).join(', ')}`,
  };
}

/**
 * Whether Node's environment file sets `NODE_OPTIONS` (Node reads it from there too), whose
 * `--require` may load anything: said unread if so. Its text is never shown: such files hold
 * secrets.
 */
function nodeOptionsSet(read: { text?: string; unread?: string }): { text?: string; unread?: string } {
  if (read.text === undefined) return { unread: read.unread! };
  return /^\s*(export\s+)?NODE_OPTIONS\s*=/m.test(read.text)
    ? { unread: 'it sets NODE_OPTIONS, whose code Latch does not read' }
    : { unread: NOTHING_RUNS };
}

function readScript(path: string): { text?: string; unread?: string } {
  try {
    if (leadsThroughProcessViews(path))
      return { unread: 'a path through /proc or /dev, which Latch would read as its own' };
  } catch (error) {
    return { unread: (error as NodeJS.ErrnoException).code ?? 'cannot be followed' };
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { unread: (error as NodeJS.ErrnoException).code ?? 'cannot be opened' };
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return { unread: 'a folder' };
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
