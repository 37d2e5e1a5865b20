import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import {
  ASSIGNMENT,
  commandWords,
  literalText,
  mayBeProse,
  writtenByRedirect,
  type SimpleCommand,
} from './commandWords.ts';
import { interpreterScripts } from './interpreterScripts.ts';
import { assignedIn, configuresGit, gitConfigured, loadedByVariables } from './loadedCode.ts';
import { LONG_COMMAND_BYTES } from './policy.ts';
import {
  localPackages,
  MAKES,
  makefiles,
  nearestPackageJson,
  PACKAGE_RUNNERS,
  packageScripts,
  RUNS_PROJECT_CODE,
  scriptsOfPackage,
  pickedWorkspaces,
  picksPackages,
  workspaceRoot,
} from './projectScripts.ts';
import { MAX_LINKS } from './realPath.ts';
import { runnerSettingsFiles, settingsRunningCode } from './runnerSettings.ts';
import {
  CHANGES_FOLDER,
  CODE_FILE,
  INTERPRETER,
  evalCodeRun,
  NOTHING_RUNS,
  optionFiles,
  runsCode,
  SHELL_FILE,
  shellCodeRun,
  SHELLS,
  WRAPPERS,
  unreadScript,
  type Feeder,
  type FileOptions,
  type Named,
} from './scriptNames.ts';

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
/** The most install scripts of a project's local packages read for one install. */
const MOST_LOCAL_SCRIPTS = 16;
/**
 * How deep code a shell or `eval` runs is read, each level within the one before
 * (`eval eval make`); the bytes of all of it, MOST_SCRIPT_BYTES.
 */
const MOST_CODE_LEVELS = 16;

/**
 * A project's runners, and their words for running (`uv run`, `npm exec`, `pnpm dlx`): the
 * program they run, or the code file they are given (`uv run x.py`, `npx tsx x.ts`). What else
 * they run (`npm test`, `uv run pytest`) comes from the project's own configuration.
 */
export const RUNNERS = new Set([
  ...['npx', 'pnpx', 'bunx', 'npm', 'pnpm', 'yarn', 'uv', 'uvx', 'poetry', 'pipenv', 'pdm', 'hatch'],
  ...['rye', 'pipx', 'conda', 'mamba', 'micromamba', 'mise', 'asdf', 'direnv', 'dotenv', 'doppler'],
  ...['aws-vault', 'op', 'corepack', 'volta', 'fnm', 'cross-env', 'env-cmd', 'dotenvx', 'xvfb-run'],
  ...['nix', 'opam', 'turbo', 'nx', 'npm-run-all', 'run-s', 'run-p', 'concurrently', 'lerna'],
]);
const RUNNING_WORDS = new Set(['run', 'exec', 'x', 'dlx', '--']);
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
  const mayBeWritten = new WrittenFiles();
  let shownLocal = 0;
  const codeRead = new Set<string>();
  let codeBytes = 0;
  const expands = EXPANDS.test(command);
  let exported: Variables = {};
  // `$PWD` is the folder the command starts in, not the daemon's.
  const commandsIn = (text: string, variablesOfText: Variables, level: number) =>
    commandWords(text, { ...variables, ...(folder ? { PWD: folder } : {}), ...variablesOfText }).map(
      (words) => ({ words, level }),
    );
  const commands = commandsIn(command, {}, 0);
  for (let at = 0; at < commands.length; at++) {
    const { words, level } = commands[at]!;
    const moved = folderAfter(words, folder, variables);
    if (moved !== false) {
      folder = moved;
      continue;
    }
    const writes = filesItMayWrite(words);
    const texts = words.map(literalText);
    // `export A=1` and a command of assignments alone set them for what follows.
    if (texts[0] === 'export' || texts.every((text) => text !== undefined && ASSIGNMENT.test(text)))
      exported = { ...exported, ...assignedIn(texts) };
    const pending = scriptsNamed(words, expands, exported);
    for (let next = 0; next < pending.length; next++) {
      const named = pending[next]!;
      if ('unread' in named) {
        found.set(named.what, { path: named.what, unread: named.unread, shell: named.shell });
        continue;
      }
      // Code a shell or `eval` runs is read next, as commands of its own: `sh -c make`. Once
      // each, and within bounds, since code may run itself (`sh -c "$0" "$0"`).
      if ('commands' in named) {
        const code = `${named.commands}\0${JSON.stringify(named.variables)}`;
        if (codeRead.has(code)) continue;
        codeRead.add(code);
        codeBytes += code.length;
        if (level >= MOST_CODE_LEVELS || codeBytes > MOST_SCRIPT_BYTES)
          found.set('code', {
            path: 'code',
            unread: 'code run deeper or longer than Latch reads',
            shell: true,
          });
        else commands.splice(at + 1, 0, ...commandsIn(named.commands, named.variables, level + 1));
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
      // Scripts run in the packages an option or the command picks: read there.
      if (named.workspaces) {
        pending.push(...pickedWorkspaces(named, path, dirname(written!), readScript));
        continue;
      }
      // One package.json may be read for different scripts (`npm test && npm run build`).
      const key = named.packageScripts ? `${path} ${named.packageScripts.join(' ')}` : path;
      if (found.has(key)) continue;
      // An install installs the project's local packages too, which run their install scripts;
      // from a workspace's folder, the whole project's.
      if (named.installs && !named.guess) {
        const root = workspaceRoot(path, readScript);
        if (root !== undefined) pending.push({ ...named, path: root });
        pending.push(...localPackages(path, readScript, variables['HOME']));
      }
      // What the runner's files of settings beside the project make it run otherwise.
      if (named.runner !== undefined && !named.guess && !named.local)
        pending.push(...runnerSettingsFiles(named.runner, path, dirname(written!), variables['HOME']));
      const read = named.packageScripts
        ? scriptsOfPackage(path, readScript(path), named.packageScripts)
        : named.settings
          ? settingsRunningCode(named.settings, readScript(path))
          : readScript(path);
      // A word that may name a file and does not (an installed module, a time for `at`, a
      // query), or names a folder or a binary (a database), is no code to show; nor a program
      // run by its path that is a binary, or missing.
      const notCode = read.text?.includes('\0') || (read.unread !== undefined && NOT_CODE.has(read.unread));
      if ((named.ifFound || named.byPath) && notCode) continue;
      if (named.guess && (read.unread !== undefined || mayBeWritten.holds(path))) continue;
      if (named.byPath && read.unread !== undefined) continue;
      const shell = named.byPath ? shebangIsShell(read.text ?? '') : named.shell;
      // More than a person writes in one command is not shown, and said so: never passed over.
      // A project's local packages, which an install brings, count apart.
      const most = named.local ? MOST_LOCAL_SCRIPTS : MOST_SCRIPTS;
      if ((named.local ? shownLocal : found.size - shownLocal) >= most) {
        found.set(key, { path, unread: `more than the ${most} scripts Latch reads of one command`, shell });
        return [...found.values()];
      }
      if (named.local) shownLocal++;
      if (mayBeWritten.holds(path))
        found.set(key, { path, unread: 'the command may write it before it runs it', shell });
      else found.set(key, { path, ...read, shell, ...(named.patch ? { patch: true } : {}) });
    }
    mayBeWritten.add(writes, folder);
  }
  return [...found.values()];
}

/** Programs that may write the files they are given (`cp x.sh y.sh`, `sed -i`), or below them (`cp -r x .`). */
const WRITERS = new Set([
  ...['cp', 'mv', 'install', 'ln', 'tee', 'dd', 'rsync', 'sed', 'gsed', 'perl', 'truncate', 'sponge'],
  ...['gawk', 'ed', 'ex', 'vim', 'vi', 'nvim', 'sort', 'iconv', 'xxd', 'openssl', 'dos2unix', 'unix2dos'],
  ...['split', 'csplit', 'base64', 'git'],
]);
/**
 * Programs that write files their words do not name (an archive's, a download's, a copy's from
 * elsewhere), or run code that may write anything: whatever they are given.
 */
const WRITE_UNNAMED = new Set([
  ...['cpio', 'pax', 'wget', 'patch', 'scp', 'sftp', 'gunzip', 'gzip', 'xz', 'unxz'],
  ...['zstd', 'unzstd', 'bzip2', 'bunzip2', 'lz4', 'uncompress', 'ar', 'rpm2cpio', 'go'],
]);
/** What git does that leaves the work tree's files as they are, bar an `--output` it names. */
const GIT_KEEPS_FILES = new Set([
  ...['status', 'log', 'diff', 'show', 'fetch', 'ls-files', 'rev-parse', 'describe', 'blame', 'grep'],
  ...['shortlog', 'branch', 'tag', 'remote', 'add', 'commit', 'push', 'config', 'rev-list', 'ls-remote'],
  ...['ls-tree', 'cat-file', 'show-ref', 'for-each-ref', 'reflog', 'merge-base', 'name-rev', 'version'],
]);
/** What a container engine does that writes no file here (`cp`, `run -v` and the rest may). */
const CONTAINERS_KEEP_FILES = new Set([
  ...['ps', 'images', 'logs', 'inspect', 'version', 'info', 'pull', 'push', 'build', 'stop', 'start'],
  ...['restart', 'rm', 'rmi', 'kill', 'tag', 'login', 'logout', 'top', 'stats', 'port', 'history'],
]);
/** Programs that write files but for what their subcommand says, and their options before it that take a value. */
const SUBCOMMANDS_KEEP_FILES: Record<string, { keep: Set<string>; valued: Set<string> }> = {
  git: {
    keep: GIT_KEEPS_FILES,
    valued: new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path']),
  },
  docker: { keep: CONTAINERS_KEEP_FILES, valued: new Set(['-H', '--host', '--context', '--config', '-c']) },
  podman: { keep: CONTAINERS_KEEP_FILES, valued: new Set(['--url', '--connection', '-c', '--root']) },
};
/** Interpreters whose inline code (`-c`, `-e`) may write anything. */
const INLINE_CODE = /^(python[\d.]*|node|nodejs|perl|ruby|php|deno|bun|lua|Rscript)$/;

/** Whether a program given these words writes files they do not name (`tar x`, `curl -O`). */
function writesUnnamed(name: string, args: (string | undefined)[]): boolean {
  const flags = args.filter((arg): arg is string => arg?.startsWith('-') === true);
  const cluster = (letters: RegExp) => flags.some((flag) => !flag.startsWith('--') && letters.test(flag));
  switch (name) {
    case 'tar':
    case 'gtar':
    case 'bsdtar':
      // Only extracting writes what the archive holds: `tar xf`, `-x`, `--extract`, `--get`.
      return (
        /^[^-]*x/.test(args[0] ?? '') || cluster(/x/) || flags.some((flag) => /^--(extract|get)/.test(flag))
      );
    case 'unzip':
      // Listing, testing or printing to stdout writes nothing.
      return !cluster(/[ltvZp]/);
    case '7z':
    case '7za':
      return args.find((arg) => arg !== undefined && !arg.startsWith('-')) === 'x' || args[0] === 'e';
    case 'curl':
      // Only an output option writes a file: `-o x`, `-O`, `--output`, `--remote-name`.
      return (
        cluster(/[oOJ]/) || flags.some((flag) => /^--(output|remote-name|remote-header-name)/.test(flag))
      );
    case 'find':
      return flags.some((flag) => /^-(exec|execdir|ok|okdir|delete|fprint)/.test(flag));
    default:
      return WRITE_UNNAMED.has(name) || (INLINE_CODE.test(name) && cluster(/[ce]/));
  }
}

/** A program's subcommand, past its own options and their values (`git -C sub status`). */
function subcommandOf(args: (string | undefined)[], valued: Set<string>): string | undefined {
  for (let at = 0; at < args.length; at++) {
    const arg = args[at];
    if (arg === undefined || !arg.startsWith('-')) return arg;
    if (valued.has(arg)) at++;
  }
  return undefined;
}

/**
 * The files one simple command may write: what a `>` names, and what a writer is given; or
 * anything, for a program that writes files it does not name or runs code that may, and a writer
 * given a word only running tells.
 */
function filesItMayWrite(words: SimpleCommand): string[] | 'anything' {
  const texts = words.map(literalText);
  const program = programAt(texts);
  const at = program && 'at' in program ? program.at : 0;
  const name = basename(texts[at] ?? '');
  const args = texts.slice(at + 1);
  const subcommands = Object.hasOwn(SUBCOMMANDS_KEEP_FILES, name) ? SUBCOMMANDS_KEEP_FILES[name] : undefined;
  if (
    subcommands
      ? !subcommands.keep.has(subcommandOf(args, subcommands.valued) ?? '')
      : writesUnnamed(name, args)
  )
    return 'anything';
  const writer = WRITERS.has(name);
  const given = words.filter((word, index) => writtenByRedirect(word) || (writer && index > at));
  if (given.some((word) => literalText(word) === undefined)) return 'anything';
  return given.map((word) => literalText(word)!.replace(/^[^=/]+=/, ''));
}

/** The files an earlier part of a command may have written, and the folders written whole. */
class WrittenFiles {
  #paths: string[] = [];
  #anything = false;

  /** From a folder only running tells, a relative name may be anything. */
  add(written: string[] | 'anything', folder: string | undefined): void {
    if (written === 'anything' || (folder === undefined && written.some((path) => !isAbsolute(path))))
      this.#anything = true;
    else for (const path of written) this.#paths.push(resolve(folder ?? '/', path));
  }

  /** A path written, or below one (`cp -r payload/. .`, `ln -sfn payload dir`). */
  holds(path: string): boolean {
    return (
      this.#anything || this.#paths.some((written) => path === written || path.startsWith(`${written}/`))
    );
  }
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
    if (scriptsNamed(words, EXPANDS.test(command)).some((named) => !('guess' in named))) return true;
    const texts = words.map(literalText);
    // A code file any program is given may be what it runs (`go run x.go`, `pytest x.py`).
    if (texts.some((text) => text !== undefined && CODE_FILE.test(text))) return true;
    const program = programAt(texts);
    const at = program && 'at' in program ? program.at : texts.length;
    // The environment a program starts with may choose the code it runs (`PATH=/tmp/x ls`, a
    // loader's or a pager's variable), and no list holds every program's variables.
    if (texts.slice(0, at).some((text) => text !== undefined && ASSIGNMENT.test(text))) return true;
    // A project's tasks, tests, builds and installs run code kept in its files (`rake`,
    // `pip install -e .`, `npx eslint` from its node_modules), which Latch does not read.
    const upToProgram = texts.slice(0, at + 1);
    if (upToProgram.some((text) => text !== undefined && RUNS_PROJECT_CODE.has(basename(text)))) return true;
    if (program === undefined || !('at' in program)) return false;
    const name = texts[program.at];
    if (name !== undefined && basename(name) === 'git' && configuresGit(texts.slice(program.at + 1)))
      return true;
    return name === undefined || runsCode(basename(name)) || basename(name) === 'eval';
  });
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
  // Past assignments and the shell's own words before a command (`if`, `then`, `{`, `!`).
  let at = texts.findIndex(
    (text) => text === undefined || !(ASSIGNMENT.test(text) || SHELL_RESERVED.has(text)),
  );
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
    // Without `-u`, runuser takes su's words: a user, and a shell's options (`runuser me -c x`).
    if (
      name === 'runuser' &&
      !texts.slice(at + 1).some((word) => word === '-u' || word?.startsWith('--user'))
    )
      return { at, elsewhere };
    // The first word after it that is not one of its options, their values (a number, a path, a
    // word after a short option: `-u me`) or an assignment, or a runner's word for running.
    const after = texts.slice(at + 1);
    const wrapperOptions = WRAPPER_OPTIONS[name];
    const next = after.findIndex((word, index) => {
      const before = after[index - 1] ?? '';
      // sudo's and doas's letters join, the last taking the value (`sudo -iu me`, `-iu "$USER"`).
      if (/^(sudo|doas)$/.test(name) && SUDO_VALUED.test(before)) return false;
      if (wrapperOptions?.valued.has(before)) return false; // `sudo --user root -s`
      if (word === undefined || runsCode(basename(word)) || isKnownProgram(basename(word))) return true;
      const value = /^-\w$/.test(before) || /^\d[\d.]*[smhd]?$/.test(word) || word.includes('/');
      return !(word.startsWith('-') || ASSIGNMENT.test(word) || (runner ? RUNNING_WORDS.has(word) : value));
    });
    // A long option Latch does not know may take the word after it (`sudo --us root -s`, as
    // getopt shortens `--user`): that word is then no program, and which one runs is not known.
    const optionBefore = next > 0 ? after[next - 1] : undefined;
    if (
      !runner &&
      optionBefore !== undefined &&
      /^--[\w-]+$/.test(optionBefore) &&
      !wrapperOptions?.flags.has(optionBefore) &&
      name !== 'firejail' && // whose long options are all written `--name=value`
      !isKnownProgram(basename(after[next] ?? '')) &&
      !runsCode(basename(after[next] ?? ''))
    )
      return { files: [unknownOption(name)], elsewhere };
    // A package runner reads its own options, a folder among them (`pnpm -C web build`).
    const scripts = PACKAGE_RUNNERS.has(name) ? packageScripts(name, after) : undefined;
    if (scripts !== undefined) return { files: scripts, elsewhere };
    // A program it runs in the packages it picks runs in their folders (`npm exec -w web -- …`).
    if (PACKAGE_RUNNERS.has(name) && picksPackages(name, after)) elsewhere = true;
    // Its own options, not the program's after them (`uv run make -C sub`).
    const own = next === -1 ? after : after.slice(0, next);
    if (own.some((word) => word !== undefined && CHANGES_FOLDER.test(word))) elsewhere = true;
    const program = after[next];
    if (runner && program !== undefined && CODE_FILE.test(program))
      return { files: [{ path: program, shell: SHELL_FILE.test(program), ifFound: true }], elsewhere };
    // The program a wrapper or a runner runs, which may be another (`doppler run -- npm test`).
    if (next !== -1) {
      at += 1 + next;
      continue;
    }
    if (runner) return undefined;
    // With no program, `sudo -s`, `unshare -r`, `chroot /` start a shell that runs its input.
    if (startsAShellAlone(name, own)) return { files: [shellOnInput(name)], elsewhere };
    const paths = after.filter((word): word is string => word !== undefined && word.includes('/'));
    return { files: paths.map((path) => ({ path, shell: true, byPath: true })), elsewhere };
  }
  return undefined;
}

/**
 * Programs that start a shell that runs its input, given no command: `newgrp`, `sg wheel`,
 * `pkexec`, `script` without `-c`, `machinectl shell`.
 */
function startsAShellOnInput(name: string, args: readonly (string | undefined)[]): boolean {
  const words = args.filter((arg) => arg === undefined || !arg.startsWith('-'));
  if (name === 'newgrp' || (name === 'pkexec' && args.length === 0)) return true;
  if (name === 'sg') return words.length <= 1 && !args.includes('-c');
  if (name === 'machinectl') return words[0] === 'shell' && words.length <= 2;
  return name === 'script' && !args.some((arg) => arg === undefined || /^(-c|--command)/.test(arg));
}

/**
 * Wrappers that start a shell when given no program: `sudo -s`, `doas -s`, `systemd-run --shell`
 * by an option; `unshare`, `nsenter`, `firejail`, `screen` alone; `chroot` given a root alone.
 */
function startsAShellAlone(name: string, own: readonly (string | undefined)[]): boolean {
  const option = (pattern: RegExp) => own.some((word) => word !== undefined && pattern.test(word));
  if (name === 'sudo' || name === 'doas') return option(STARTS_A_SHELL);
  if (name === 'systemd-run') return option(/^(-[a-zA-Z]*S[a-zA-Z]*|--shell)$/);
  // Its words that are no option nor an option's value: chroot's new root, or a program.
  const valued = WRAPPER_OPTIONS[name]?.valued;
  const operands = own.filter(
    (word, index) => word === undefined || (!word.startsWith('-') && !valued?.has(own[index - 1] ?? '')),
  );
  if (name === 'chroot') return operands.length <= 1;
  return ['unshare', 'nsenter', 'firejail', 'screen'].includes(name) && operands.length === 0;
}

/**
 * Wrappers' options written apart from their value (`sudo --user root`, `xargs --arg-file list`,
 * `unshare -S 0`), and their long options that take none; any other long option before the
 * program's word may have taken it as its value.
 */
const WRAPPER_OPTIONS: Record<string, { valued: ReadonlySet<string>; flags: ReadonlySet<string> }> = {
  sudo: longOptions(
    [
      'user',
      'group',
      'host',
      'prompt',
      'chdir',
      'chroot',
      'close-from',
      'role',
      'type',
      'other-user',
      'command-timeout',
    ],
    [
      'preserve-env',
      'login',
      'shell',
      'non-interactive',
      'background',
      'stdin',
      'set-home',
      'preserve-groups',
    ],
    ['reset-timestamp', 'remove-timestamp', 'askpass', 'bell', 'no-update'],
  ),
  xargs: longOptions(
    ['arg-file', 'delimiter', 'max-args', 'max-chars', 'max-procs', 'process-slot-var'],
    // `--replace`, `--eof` and `--max-lines` take a value only after `=`.
    ['null', 'no-run-if-empty', 'verbose', 'interactive', 'open-tty', 'exit', 'show-limits', 'replace'],
    ['eof', 'max-lines'],
  ),
  parallel: longOptions(
    [
      ...['jobs', 'arg-file', 'colsep', 'delimiter', 'joblog', 'results', 'sshlogin', 'sshloginfile', 'wd'],
      ...['workdir', 'tmpdir', 'timeout', 'delay', 'retries', 'halt', 'tagstring', 'basefile', 'return'],
      ...['transferfile', 'env', 'load', 'memfree', 'nice', 'block', 'max-args', 'max-procs', 'max-lines'],
    ],
    ['will-cite', 'keep-order', 'line-buffer', 'tag', 'group', 'ungroup', 'pipe', 'dry-run', 'verbose'],
    ['progress', 'eta', 'bar', 'null', 'no-run-if-empty', 'quote', 'halt-on-error'],
  ),
  timeout: longOptions(['signal', 'kill-after'], ['foreground', 'preserve-status', 'verbose']),
  env: longOptions(['unset', 'chdir'], ['ignore-environment', 'null', 'debug']),
  nice: longOptions(['adjustment'], []),
  flock: longOptions(['timeout', 'wait', 'conflict-exit-code'], ['shared', 'exclusive', 'nonblock', 'close']),
  'systemd-run': longOptions(
    ['unit', 'property', 'description', 'slice', 'uid', 'gid', 'nice', 'working-directory', 'setenv'],
    ['user', 'system', 'scope', 'pty', 'pipe', 'quiet', 'wait', 'collect', 'same-dir', 'shell'],
  ),
  setsid: longOptions([], ['ctty', 'fork', 'wait']),
  unshare: longOptions(
    [
      'map-user',
      'map-group',
      'propagation',
      'setgroups',
      'root',
      'wd',
      'setuid',
      'setgid',
      '-S',
      '-G',
      '-R',
      '-w',
    ],
    ['mount', 'uts', 'ipc', 'net', 'pid', 'user', 'cgroup', 'time', 'fork', 'mount-proc'],
    ['map-root-user', 'map-current-user', 'kill-child'],
  ),
  nsenter: longOptions(
    ['target', 'setuid', 'setgid', '-t', '-S', '-G'],
    ['mount', 'uts', 'ipc', 'net', 'pid', 'user', 'cgroup', 'time', 'preserve-credentials', 'no-fork'],
  ),
  chroot: longOptions(['userspec', 'groups'], ['skip-chdir']),
  screen: longOptions(['-S', '-c', '-e', '-h', '-p', '-T', '-X'], []),
  time: longOptions(['output', 'format'], ['verbose', 'portability', 'append', 'quiet']),
  watch: longOptions(
    ['interval'],
    ['differences', 'chgexit', 'exec', 'beep', 'errexit', 'precise', 'no-title', 'color', 'no-wrap'],
  ),
  ionice: longOptions(['class', 'classdata'], ['ignore']),
  strace: longOptions(['output', 'trace', 'string-limit', 'attach'], ['follow-forks', 'summary-only']),
};
/** A wrapper's options: those that take a value (by their long name, or `-x`), then its flags. */
function longOptions(valued: readonly string[], ...flags: (readonly string[])[]) {
  const spelled = (names: readonly string[]) =>
    new Set(names.map((option) => (option.startsWith('-') ? option : `--${option}`)));
  return { valued: spelled(valued), flags: spelled(flags.flat()) };
}
const unknownOption = (name: string): Named => ({
  unread: `an option of ${name} Latch does not know may take the word after it`,
  shell: true,
  what: name,
});

/** sudo's and doas's options that take a value, last among joined letters (`-iu me`). */
const SUDO_VALUED = /^-[a-zA-Z]*[ugCDhprtTUR]$/;
/** sudo's options that start a shell (`-s`, `-i`, among other letters: `-Es`). */
const STARTS_A_SHELL = /^(-[a-zA-Z]*[is][a-zA-Z]*|--shell|--login)$/;
const shellOnInput = (name: string): Named => ({
  unread: 'it starts a shell that runs the code its input holds, which is not known before it runs',
  shell: true,
  what: `${name}'s shell`,
});

/** The shell's words that come before a command in a compound one: `if make; then npm test; fi`. */
const SHELL_RESERVED = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', 'coproc']);

/** What a shell expands in a here-document whose end word is not quoted: `$x`, `$(…)`, backticks. */
const EXPANDS = /[$`]/;

/** Variables an earlier part of the command exported (`export PERL5LIB=lib; perl -MSetup …`). */
type Variables = Readonly<Record<string, string>>;

/**
 * The files one simple command runs code from, as written, or the code it cannot read.
 * `expands`: the command holds what a shell expands, were it in a here-document.
 */
function scriptsNamed(
  words: SimpleCommand,
  expands: boolean,
  exported: Variables = {},
  fedBy?: Feeder,
): Named[] {
  const texts = words.map(literalText);
  const program = programAt(texts);
  const fed = fedBy ?? feederOf(texts.slice(0, program && 'at' in program ? program.at : texts.length));
  // A package runner or make whose words xargs or parallel completes runs a script or a
  // folder's only running tells (`echo test | xargs npm`, `xargs -I{} make -C {}`).
  const completed = fedBy === undefined ? runnerFed(texts) : undefined;
  if (completed !== undefined)
    return [{ unread: 'the program running it adds to its words', shell: true, what: completed }];
  const named = [
    ...scriptsOf(words, program, expands, exported, fed),
    ...codeFurtherOn(words, program, expands, exported),
  ];
  // A package runner running a program (`npx x`, `npm exec x`) runs it with the shell its
  // settings beside the project name: those are read as for its scripts.
  const runner = texts
    .slice(0, program && 'at' in program ? program.at : 0)
    .map((text) => RUNNER_OF_PROGRAM[basename(text ?? '')])
    .find(Boolean);
  const settings: Named[] = runner
    ? [{ path: 'package.json', shell: true, ifFound: true, packageScripts: [], runner }]
    : [];
  return [...(program?.elsewhere ? inAnotherFolder(named) : named), ...settings];
}

/** The package runner whose settings a runner of packages' programs reads (`npx` is npm's). */
const RUNNER_OF_PROGRAM: Record<string, string> = {
  ...Object.fromEntries([...PACKAGE_RUNNERS].map((runner) => [runner, runner])),
  npx: 'npm',
  pnpx: 'pnpm',
  bunx: 'bun',
};

/** Run in a folder only running tells, a relative path may be any file, and code any command's. */
const inAnotherFolder = (named: Named[]): Named[] =>
  named.map((file) =>
    'commands' in file
      ? { unread: 'its folder is one only running tells', shell: true, what: 'its code' }
      : 'path' in file && !isAbsolute(file.path)
        ? { unread: 'its folder is one only running tells', shell: file.shell, what: file.path }
        : file,
  );

/**
 * Past a wrapper or runner whose options may have been taken for its program
 * (`flock build.lock bash x.sh`, `uv run --with requests python x.py`): a shell, an interpreter,
 * a package runner or make further on, and the files it would run that are there. After a
 * program Latch does not know, the same where its words start with one (`entr make`,
 * `watchexec -e ts -- npm test`): a guess, shown if it is there, never said unread.
 */
function codeFurtherOn(
  words: SimpleCommand,
  program: ReturnType<typeof programAt>,
  expands: boolean,
  exported: Variables,
): Named[] {
  const texts = words.map(literalText);
  const first = texts.findIndex((text) => text === undefined || !ASSIGNMENT.test(text));
  const wrapped = WRAPPERS.has(basename(texts[first] ?? '')) || RUNNERS.has(basename(texts[first] ?? ''));
  const found = program && 'at' in program ? program.at : first;
  const name = basename(texts[found] ?? '');
  if (program && 'at' in program && runsCode(name)) return [];
  const runsWhatFollows = (index: number) => {
    const text = texts[index];
    if (index <= found || text === undefined) return false;
    const further = basename(text);
    return (
      SHELLS.has(further) || INTERPRETER.test(further) || PACKAGE_RUNNERS.has(further) || MAKES.has(further)
    );
  };
  // Not from a quoted string that may be prose, nor past a program whose words Latch reads.
  const unknown = program !== undefined && 'at' in program && !mayBeProse(words) && !wordsAreKnown(name);
  const start = texts.findIndex(
    (text, index) =>
      index > found && (text === undefined || !(text.startsWith('-') || RUNNING_WORDS.has(text))),
  );
  const at = wrapped
    ? texts.findIndex((_, index) => runsWhatFollows(index))
    : unknown
      ? ([start, texts.indexOf('--', found + 1) + 1].find((index) => index > 0 && runsWhatFollows(index)) ??
        -1)
      : -1;
  if (at === -1) return [];
  const further = basename(texts[at]!);
  const named = runsCode(further)
    ? interpreterScripts(further, words.slice(at + 1), expands, { ...exported, ...assignedIn(texts) })
    : scriptsNamed(words.slice(at), expands, exported);
  if (!wrapped)
    return named.flatMap((file): Named[] =>
      'path' in file ? [{ ...file, ifFound: true, guess: true }] : [],
    );
  // What it names is read if it is there; the code a shell further on runs, as commands.
  const files = named.flatMap((file): Named[] =>
    'unread' in file ? [] : ['path' in file ? { ...file, ifFound: true } : file],
  );
  // `uv run --directory x python y.py`: an option whose value was taken for the program.
  const elsewhere = texts
    .slice(first, at)
    .some(
      (text, index) =>
        text !== undefined &&
        (CHANGES_FOLDER.test(text) ||
          (PACKAGE_RUNNERS.has(basename(text)) &&
            picksPackages(basename(text), texts.slice(first + index + 1, at)))),
    );
  return elsewhere ? inAnotherFolder(files) : files;
}

function scriptsOf(
  words: SimpleCommand,
  program: ReturnType<typeof programAt>,
  expands: boolean,
  exported: Variables,
  fed: Feeder | undefined,
): Named[] {
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
  if (name === 'eval') return [...named, ...evalCodeRun(words.slice(at + 1))];
  if (startsAShellOnInput(name, args)) return [...named, shellOnInput(name)];
  if (name === 'su' || name === 'runuser') {
    const code = shellCodeRun(name, words.slice(at + 1), fed);
    // Without `-c`, su starts a shell that runs its input.
    const given = args.some((arg) => arg === undefined || /^(-c|--(session-)?command(=.*)?)$/s.test(arg));
    return [...named, ...(given ? code : [shellOnInput(name)])];
  }
  if (runsCode(name))
    return [
      ...named,
      ...interpreterScripts(name, words.slice(at + 1), expands, { ...exported, ...assignedIn(texts) }, fed),
    ];
  if (name === 'find') return [...named, ...findExecs(words.slice(at + 1), expands)];
  if (name === 'git') return [...named, ...gitConfigured(args), ...gitPatches(args), ...gitCommands(args)];
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

const PATCH_FROM_INPUT = (what: string): Named => ({
  unread: 'it applies the patch its input holds, which is not known before it runs',
  shell: false,
  what,
});

/** What `find … -exec` (`-execdir`, `-ok`) runs, as a command of its own up to its `;` or `+`. */
/** find puts a path where `{}` stands in what `-exec` runs. */
const FIND_EXEC: Feeder = { appends: false, replaces: false };

/**
 * xargs or parallel among the words before a program, which complete its words from their input:
 * by adding them, and in place of `{}` or of a string an option names (`xargs -I %`).
 */
function feederOf(before: readonly (string | undefined)[]): Feeder | undefined {
  const at = before.findIndex((text) => text !== undefined && /^(xargs|parallel)$/.test(basename(text)));
  if (at === -1) return undefined;
  const replaces = before
    .slice(at + 1)
    .some((text) => text === undefined || /^(-[IiJ].*|--replace(=.*)?)$/s.test(text));
  return { appends: true, replaces };
}

/** The package runner or make that xargs or parallel runs, past its options, if it runs one. */
function runnerFed(texts: readonly (string | undefined)[]): string | undefined {
  const feeder = texts.findIndex((text) => text !== undefined && /^(xargs|parallel)$/.test(basename(text)));
  if (feeder === -1) return undefined;
  for (let at = feeder + 1; at < texts.length; at++) {
    const name = basename(texts[at] ?? '');
    if (PACKAGE_RUNNERS.has(name) || MAKES.has(name)) return name;
    if (runsCode(name) || isKnownProgram(name)) return undefined;
    // Its options, and their values; anything else is the program it runs.
    if (texts[at] === undefined || !(name.startsWith('-') || texts[at - 1]?.startsWith('-')))
      return undefined;
  }
  return undefined;
}

function findExecs(words: SimpleCommand, expands: boolean): Named[] {
  const texts = words.map(literalText);
  return texts.flatMap((text, index) => {
    if (!/^-(exec|execdir|ok|okdir)$/.test(text ?? '')) return [];
    const end = texts.findIndex((word, after) => after > index && (word === ';' || word === '+'));
    const named = scriptsNamed(words.slice(index + 1, end === -1 ? undefined : end), expands, {}, FIND_EXEC);
    // `-execdir` runs it in the folder of each file found.
    return text!.endsWith('dir') ? inAnotherFolder(named) : named;
  });
}

/** Where git's command is, past its own options (`-C dir`, `-c key=value`). */
function gitCommandAt(args: (string | undefined)[]): number {
  let at = 0;
  while (at < args.length && (args[at] === undefined || args[at]!.startsWith('-')))
    at += args[at] === '-C' || args[at] === '-c' ? 2 : 1;
  return at;
}

/**
 * Commands git runs itself where it checks out other files, which only running tells:
 * `git rebase -x make` and `git bisect run make` in other commits, `git submodule foreach` in
 * each submodule's folder.
 */
function gitCommands(args: (string | undefined)[]): Named[] {
  const at = gitCommandAt(args);
  const rest = args.slice(at + 1);
  // `--exec` as git takes it, shortened (`--ex`), or `-x` among short options (`-ix`).
  const exec = (arg: string | undefined) => arg !== undefined && /^(--ex(ec?)?(=|$)|-[a-wyz]*x)/.test(arg);
  const runs =
    (args[at] === 'rebase' && rest.some(exec)) ||
    (args[at] === 'bisect' && rest[0] === 'run') ||
    (args[at] === 'submodule' && rest.includes('foreach'));
  return runs
    ? [{ unread: 'it runs commands where git checks out other files', shell: true, what: `git ${args[at]}` }]
    : [];
}

/** `git apply` and `git am`, past git's own options (`-C dir`, `-c key=value`): each patch given, or its input. */
function gitPatches(args: (string | undefined)[]): Named[] {
  const at = gitCommandAt(args);
  if (args[at] !== 'apply' && args[at] !== 'am') return [];
  const rest = args.slice(at + 1);
  if (rest.some((arg) => arg !== undefined && (PATCH_ONLY_LOOKS.has(arg) || AM_HELD.has(arg)))) return [];
  const files = filesGiven(rest, { shell: false, patch: true }, []);
  if (files.length === 0) return [PATCH_FROM_INPUT(`git ${args[at]}'s input`)];
  // `git -C dir` applies in that folder, from which its relative files are read.
  return args.slice(0, at).includes('-C') ? inAnotherFolder(files) : files;
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

/** Programs that are never an option's value: a wrapper's, a runner's, make, git. */
const isKnownProgram = (name: string) =>
  WRAPPERS.has(name) || RUNNERS.has(name) || PACKAGE_RUNNERS.has(name) || MAKES.has(name) || name === 'git';
/**
 * Programs whose words Latch reads, or knows to name programs they do not run here, or knows to
 * run a project's code: no program of theirs is guessed from them.
 */
const wordsAreKnown = (name: string) =>
  isKnownProgram(name) ||
  NAMES_PROGRAMS.has(name) ||
  RUNS_PROJECT_CODE.has(name) ||
  ['eval', 'su', 'find'].includes(name) ||
  Object.hasOwn(PROGRAM_FILE_OPTIONS, name) ||
  Object.hasOwn(READS_FILES_GIVEN, name);
/**
 * Programs whose words name programs they do not run here: `which make`, `apt install make`,
 * `grep -rn npm`, `ssh host make`, `docker exec c npm test` (elsewhere, not this folder's).
 */
const NAMES_PROGRAMS = new Set([
  ...['which', 'type', 'whereis', 'whatis', 'apropos', 'man', 'info', 'tldr', 'echo', 'printf', 'hash'],
  ...['alias', 'unalias', 'complete', 'apt', 'apt-get', 'apt-cache', 'dpkg', 'brew', 'dnf', 'yum', 'pacman'],
  ...['apk', 'zypper', 'snap', 'port', 'pkg', 'pgrep', 'pkill', 'killall', 'pidof', 'ps', 'locate'],
  ...['grep', 'egrep', 'fgrep', 'rg', 'ag', 'ack', 'fd', 'ls', 'cat', 'less', 'head', 'tail', 'wc', 'file'],
  ...['stat', 'touch', 'mkdir', 'rm', 'cp', 'mv', 'ln', 'tee', 'chmod', 'chown', 'diff', 'tar', 'zip'],
  ...['curl', 'wget', 'systemctl', 'journalctl', 'service', 'lsof', 'ssh', 'scp', 'mosh', 'docker'],
  ...['podman', 'nerdctl', 'kubectl', 'helm', 'vagrant', 'lxc', 'gh', 'history', 'fc', 'rsync'],
]);

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

/** Encodings in which code reads as Latch reads it, UTF-8 (ASCII is a part of it). */
const UTF8_ENCODINGS = new Set(['utf-8', 'utf8', 'utf-8-sig', 'ascii', 'us-ascii']);

/**
 * The encoding a file's first two lines declare, as Python (PEP 263) and Ruby read a magic
 * comment: `# -*- coding: utf-7 -*-`, `# encoding: latin-1`, `# vim: set fileencoding=…`.
 */
function declaredEncoding(text: string): string | undefined {
  // Python ends a line at a lone CR too.
  for (const line of text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/, 2)) {
    const found = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/.exec(line);
    if (found) return found[1];
  }
  return undefined;
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
    const text = bytes.subarray(0, length).toString('utf8');
    // Read as UTF-8, code that says it is in another encoding is not what its interpreter runs:
    // in UTF-7, `#+AAo-os.system(…)` is a comment here and a line of code to Python.
    const encoding = declaredEncoding(text);
    if (encoding !== undefined && !UTF8_ENCODINGS.has(encoding.toLowerCase().replaceAll('_', '-')))
      return { unread: `it says it is in the encoding ${encoding}, which Latch does not read` };
    return { text };
  } catch (error) {
    return { unread: (error as NodeJS.ErrnoException).code ?? 'cannot be read' };
  } finally {
    closeSync(fd);
  }
}
