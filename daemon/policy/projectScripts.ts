import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { globMatches } from './glob.ts';
import {
  CODE_FILE,
  NOTHING_RUNS,
  NPM_CODE_SETTINGS,
  NPM_PLACE_SETTINGS,
  optionFiles,
  runsCode,
  unreadScript,
  type Named,
  type WorkspacePick,
} from './scriptNames.ts';

/**
 * What a project's own configuration makes a command run: the package.json scripts of
 * `npm test` or `yarn build`, the makefile of `make`; and the programs that run a project's code
 * from files Latch does not read (`rake`, `pytest`, `pip install -e .`).
 */

/**
 * Runners that run a project's package.json scripts: `npm test` its `pretest`, `test` and
 * `posttest`, `npm run x` and `yarn x` the script `x` (with its `prex` and `postx`), an install
 * the project's own install scripts. A runner that runs a package's program (`npm exec`) runs
 * none of them.
 */
export const PACKAGE_RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const RUNS_A_SCRIPT = new Set(['run', 'run-script', 'rum', 'urn']);
const RUNS_A_PROGRAM = new Set(['exec', 'x', 'dlx', '--']);
/** Each command and the scripts it runs, by npm's names and aliases (`npm i`, `npm cit`). */
const INSTALLS = ['install', 'prepare', 'prepublish'];
const SCRIPTS_OF_COMMAND: Record<string, readonly string[]> = {
  ...commandsRunning(['t', 'tst', 'test'], ['test']),
  ...commandsRunning(
    [
      ...['install', 'i', 'in', 'ins', 'inst', 'insta', 'instal', 'isnt', 'isnta', 'isntal'],
      ...['isntall', 'add', 'ci', 'clean-install', 'ic', 'install-clean', 'isntall-clean', 'link'],
      ...['ln', 'rebuild', 'rb', 'update', 'up', 'upgrade', 'udpate', 'uninstall', 'un', 'unlink'],
      ...['remove', 'rm', 'r', 'dedupe', 'ddp', 'prune'],
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
/** A runner's options that run its scripts with another program or configuration. */
const RUNS_SCRIPTS_OTHERWISE = new RegExp(`^--(${NPM_CODE_SETTINGS.join('|')})(=.*)?$`, 's');
/**
 * Each runner's options that pick the project's packages it runs in: by their value (a name, a
 * pattern, a folder), every one, or the root too.
 */
const WORKSPACE_OPTIONS: Record<string, { byValue?: RegExp; every?: RegExp; root?: RegExp }> = {
  npm: {
    byValue: /^(-w|--workspace)(=(.*))?$/s,
    every: /^(-ws|--ws|--workspaces)(=.*)?$/s,
    root: /^(-iwr|--iwr|--include-workspace-root)$/,
  },
  pnpm: {
    byValue: /^(-F|--filter)(=(.*))?$/s,
    every: /^(-r|--recursive)$/,
    root: /^(-w|--workspace-root|--include-workspace-root)$/,
  },
  bun: { byValue: /^(-F|--filter)(=(.*))?$/s },
};
/**
 * npm takes any start of a long option that names one only (`--include-workspace` for
 * `--include-workspace-root`): those of the options that pick packages or what runs the scripts.
 * Its own options of those names are no shortening (`--global`, `--include=dev`).
 */
const NPM_OPTIONS_READ = [...NPM_CODE_SETTINGS, ...NPM_PLACE_SETTINGS];
const NPM_OPTIONS_OF_THEIR_OWN = ['global', 'include'];
const abbreviatesNpmOption = (word: string) => {
  const name = /^--([\w-]{2,})(=.*)?$/s.exec(word)?.[1];
  return (
    name !== undefined &&
    !NPM_OPTIONS_READ.includes(name) &&
    !NPM_OPTIONS_OF_THEIR_OWN.includes(name) &&
    NPM_OPTIONS_READ.some((full) => full.startsWith(name))
  );
};
/** pnpm's commands that run in every package (`pnpm recursive run build`). */
const RUNS_IN_EVERY_PACKAGE = new Set(['recursive', 'm', 'multi']);
/** `yarn workspaces foreach`'s options: flags, and those that take the word after them. */
const FOREACH_FLAG =
  /^(-[ARWvpit]+|--(all|recursive|worktree|verbose|parallel|interlaced|topological(-dev)?|no-private|since)|--[\w-]+=.*)$/s;
const FOREACH_VALUED = new Set(['--from', '--include', '--exclude', '-j', '--jobs']);
/**
 * A runner's options known to take no value: one letter, or a long option Latch knows. Any other,
 * not written `--name=value`, may take the word after it, which is then no command.
 */
const RUNNER_FLAG = new RegExp(
  `^(-[a-zA-Z]|--?[\\w-]+=.*|--(${[
    ...['version', 'help', 'silent', 'quiet', 'verbose', 'global', 'if-present', 'ignore-scripts'],
    ...['foreground-scripts', 'offline', 'prefer-offline', 'prefer-online', 'frozen-lockfile'],
    ...['pure-lockfile', 'immutable', 'production', 'prod', 'dev', 'json', 'parseable', 'long', 'yes'],
    ...['force', 'dry-run', 'stream', 'parallel', 'legacy-peer-deps', 'strict-peer-deps', 'save'],
    ...['save-dev', 'save-exact', 'save-optional', 'save-peer', 'ignore-engines', 'non-interactive'],
    ...['shamefully-hoist', 'no-[\\w-]+'],
  ].join('|')}))$`,
  's',
);
/** A runner's options that name the package's folder: npm's `--prefix`, pnpm's `-C`, yarn's `--cwd`. */
const RUNNER_FOLDER = /^(-C|--cwd|--dir|--prefix)(=(.*))?$/s;
/** A runner's options that take the word after them as their value. */
const RUNNER_VALUED = new Set([
  ...['--registry', '--cache', '--loglevel', '--tag', '--access', '--otp', '--network-timeout', '--reporter'],
  ...['--mutex', '--modules-folder', '--cache-folder', '--store-dir', '--virtual-store-dir', '--scope'],
]);
/**
 * Programs that run code a project keeps in its own files: tasks, tests, builds, installs of
 * the project, packages' programs from its node_modules. What they run is not read.
 */
export const RUNS_PROJECT_CODE = new Set([
  ...['just', 'task', 'rake', 'mise', 'composer', 'pdm', 'rye', 'hatch', 'poe', 'invoke', 'nox', 'tox'],
  ...['pytest', 'py.test', 'cargo', 'go', 'gradle', 'gradlew', 'mvn', 'mvnw', 'bundle', 'ant', 'sbt'],
  ...['dotnet', 'cmake', 'meson', 'bazel', 'pip', 'pip3', 'pipx', 'poetry', 'uv', 'npx', 'bunx', 'pnpx'],
  ...['npm', 'pnpm', 'yarn', 'turbo', 'nx', 'lerna', 'npm-run-all', 'run-s', 'run-p', 'concurrently'],
  ...['vitest', 'jest', 'mocha', 'ava', 'tap', 'playwright', 'cypress', 'karma', 'eslint', 'webpack'],
  ...['vite', 'rollup', 'parcel', 'next', 'nuxt', 'astro', 'gulp', 'grunt', 'prove', 'rspec', 'rails'],
  ...['flask', 'uvicorn', 'gunicorn', 'django-admin', 'phpunit', 'behave', 'cucumber', 'hardhat'],
  ...['nix', 'opam', 'xvfb-run', 'cross-env', 'env-cmd', 'dotenvx'],
]);
/** make, by the names it goes by. */
export const MAKES = new Set(['make', 'gmake', 'bmake', 'pmake', 'remake', 'colormake', 'mingw32-make']);
/**
 * The package.json scripts a package runner runs (`npm test`, `yarn build`, `pnpm run x`), given
 * the words after it, read from the folder's package.json if it holds them, or from the project's
 * packages an option or its command picks (`npm -w web test`); undefined when it runs a program
 * instead (`npm exec x`, `yarn node x.js`, `bun x.ts`).
 */
export function packageScripts(runner: string, args: (string | undefined)[]): Named[] | undefined {
  if (args.some((word) => word !== undefined && RUNS_SCRIPTS_OTHERWISE.test(word)))
    return unreadPackage('an option picks what runs its scripts');
  const options = workspaceOptions(runner, args);
  if ('unread' in options) return unreadPackage(options.unread);
  const scripts = scriptsOfCommand(runner, options.rest, undefined);
  if (!options.pick) return scripts;
  const picked = inWorkspaces(scripts, options.pick);
  // An option after pnpm's or bun's script may be the script's own: read here and there.
  return options.alsoHere && scripts && picked ? [...scripts, ...picked] : picked;
}

/**
 * Whether a package runner's words pick the project's packages it runs in, where a program it
 * runs (`npm exec -w web -- sh x.sh`, `yarn workspace web node x.js`) runs in their folders.
 */
export function picksPackages(runner: string, args: readonly (string | undefined)[]): boolean {
  const options = workspaceOptions(runner, args);
  const picking = PICKING_COMMANDS[runner];
  return (
    !('rest' in options) ||
    options.pick !== undefined ||
    args.some((word) => word !== undefined && picking?.has(word))
  );
}
/** Each runner's commands that pick the packages what follows runs in. */
const PICKING_COMMANDS: Record<string, ReadonlySet<string>> = {
  yarn: new Set(['workspace', 'workspaces']),
  pnpm: RUNS_IN_EVERY_PACKAGE,
};

const unreadPackage = (why: string): Named[] => [{ unread: why, shell: true, what: 'package.json' }];

/**
 * The packages a runner's options pick (`-w web`, `--filter ./apps`, `-r`), and its other words;
 * `alsoHere` where pnpm or bun may give a picking option after the command to its script.
 */
function workspaceOptions(
  runner: string,
  args: readonly (string | undefined)[],
): { pick?: WorkspacePick; alsoHere?: boolean; rest: (string | undefined)[] } | { unread: string } {
  const options = WORKSPACE_OPTIONS[runner] ?? {};
  const selectors: string[] = [];
  let every = false;
  let withRoot = false;
  let alsoHere = false;
  const rest: (string | undefined)[] = [];
  for (let at = 0; at < args.length; at++) {
    const word = args[at];
    // After `--`, the words are the script's own.
    if (word === '--') {
      rest.push(...args.slice(at));
      break;
    }
    if (runner === 'npm' && word !== undefined && abbreviatesNpmOption(word))
      return { unread: 'an option Latch does not read may pick the packages, or what runs its scripts' };
    const byValue = word === undefined ? undefined : options.byValue?.exec(word);
    const picks = byValue || (word !== undefined && (options.every?.test(word) || options.root?.test(word)));
    if (
      picks &&
      runner !== 'npm' &&
      rest.some((earlier) => earlier === undefined || !earlier.startsWith('-'))
    )
      alsoHere = true;
    if (byValue) {
      const value = byValue[2] === undefined ? args[++at] : byValue[3];
      if (value === undefined) return { unread: 'the packages it picks are ones only running tells' };
      selectors.push(value);
    } else if (word !== undefined && options.every?.test(word)) every = true;
    else if (word !== undefined && options.root?.test(word)) withRoot = true;
    else rest.push(word);
  }
  const pick: WorkspacePick | undefined = every
    ? { every: true }
    : selectors.length > 0 || withRoot
      ? { selectors, withRoot }
      : undefined;
  return pick ? { pick, alsoHere, rest } : { rest };
}

/** `named`'s files (package.json, `server.js`), in the packages `pick` picks as well as any picked already. */
function inWorkspaces(named: Named[] | undefined, pick: WorkspacePick): Named[] | undefined {
  const both = (picked: WorkspacePick | undefined): WorkspacePick =>
    picked === undefined
      ? pick
      : 'every' in picked || 'every' in pick
        ? { every: true }
        : { selectors: [...picked.selectors, ...pick.selectors], withRoot: picked.withRoot || pick.withRoot };
  return named?.map((file) => ('path' in file ? { ...file, workspaces: both(file.workspaces) } : file));
}

/** The scripts of a runner's command, its options aside but a folder's (`-C web`), in `folder`. */
function scriptsOfCommand(
  runner: string,
  args: readonly (string | undefined)[],
  folder: string | undefined,
): Named[] | undefined {
  // The words that are no option nor an option's value, and where they are; where the first
  // option Latch does not know came among them (it may have taken the word after it: Latch does
  // not guess); the folder.
  const words: (string | undefined)[] = [];
  const wordAt: number[] = [];
  let unknownAt: number | undefined;
  for (let at = 0; at < args.length; at++) {
    const word = args[at];
    if (word === undefined || !word.startsWith('-')) {
      words.push(word);
      wordAt.push(at);
    } else if (RUNNER_FOLDER.test(word)) {
      const given = RUNNER_FOLDER.exec(word)!;
      const value = given[2] === undefined ? args[++at] : given[3];
      if (value === undefined || folder !== undefined)
        return unreadPackage('its folder is one only running tells');
      folder = value;
    } else if (RUNNER_VALUED.has(word)) at++;
    else if (!RUNNER_FLAG.test(word)) unknownAt ??= words.length;
  }
  const inFolder = (path: string) => (folder === undefined ? path : join(folder, path));
  if (unknownAt === 0) return unreadPackage('an option Latch does not know may take the word after it');
  const [command, script] = words;
  // With no command (`yarn`, `yarn --frozen-lockfile`), yarn installs; the others say how they
  // are used (`npm --version`).
  if (command === undefined && words.length === 0)
    return runner === 'yarn' ? [{ ...packageFile(runner, INSTALLS, inFolder), installs: true }] : [];
  if (command === undefined) return [unreadScript(runner, true)];
  const after = (index: number) => args.slice(wordAt[index]! + 1);
  if (runner === 'pnpm' && RUNS_IN_EVERY_PACKAGE.has(command))
    return inWorkspaces(scriptsOfCommand(runner, after(0), folder), { every: true });
  // `yarn workspace web test` runs `yarn test` in the workspace `web`; `yarn workspaces foreach
  // -A run build` and `yarn workspaces run build` in each.
  if (runner === 'yarn' && command === 'workspace' && script !== undefined)
    return inWorkspaces(scriptsOfCommand(runner, after(1), folder), { selectors: [script], withRoot: false });
  if (runner === 'yarn' && command === 'workspaces' && (script === 'list' || script === 'info')) return [];
  if (runner === 'yarn' && command === 'workspaces' && (script === 'run' || script === 'foreach')) {
    const rest = after(script === 'run' ? 0 : 1);
    let start = 0;
    if (script === 'foreach')
      for (; rest[start]?.startsWith('-'); start++)
        if (FOREACH_VALUED.has(rest[start]!)) start++;
        else if (!FOREACH_FLAG.test(rest[start]!))
          return unreadPackage('an option Latch does not know may take the word after it');
    return inWorkspaces(scriptsOfCommand(runner, rest.slice(start), folder), { every: true });
  }
  if (['workspace', 'workspaces', ...RUNS_IN_EVERY_PACKAGE].includes(command))
    return unreadPackage('its command picks the packages');
  if (RUNS_A_PROGRAM.has(command) || runsCode(basename(command)) || CODE_FILE.test(command)) return undefined;
  const scripts = SCRIPTS_OF_COMMAND[command] ?? [command];
  // With no start script, npm runs `node server.js`: its code is read too.
  if (scripts.includes('start'))
    return [
      packageFile(runner, scripts, inFolder),
      { path: inFolder('server.js'), shell: false, ifFound: true },
    ];
  if (!RUNS_A_SCRIPT.has(command))
    return [
      {
        ...packageFile(runner, scripts, inFolder),
        ...(scripts.includes('install') ? { installs: true } : {}),
      },
    ];
  // `npm run --x y build`: the script run may be an option's value.
  if (unknownAt === 1) return unreadPackage('an option Latch does not know may take the word after it');
  if (words.length === 1) return [];
  return script === undefined ? [unreadScript(runner, true)] : [packageFile(runner, [script], inFolder)];
}

/**
 * The folder's package.json, for these scripts and the `pre` and `post` scripts each brings, run
 * by `runner` (whose settings beside it are read too; a local package's are its project's).
 */
const packageFile = (
  runner: string | undefined,
  scripts: readonly string[],
  inFolder: (path: string) => string,
): Named => ({
  path: inFolder('package.json'),
  shell: true,
  ifFound: true,
  packageScripts: scripts.flatMap((script) => [`pre${script}`, script, `post${script}`]),
  ...(runner === undefined ? {} : { runner }),
});

/** Reads a file as a script is read (a regular file, never waiting), or says why not (`ENOENT`). */
type ReadFile = (path: string) => { text?: string; unread?: string };

/** The most local packages one install is looked through for, and folders walked to find them. */
const MOST_LOCAL_PACKAGES = 256;
const MOST_FOLDERS_WALKED = 2048;
/** A dependency from this machine: `file:../lib`, `link:x`, `portal:x`, or a path alone (`./lib`). */
const FROM_THIS_MACHINE = /^(?:(?:file|link|portal):(.*)|((?:\.{1,2}|~)(?:\/.*)?|\/.*))$/s;
/** A dependency from this machine that Latch does not read: a git folder's, a command's output. */
const UNREAD_HERE = /^(git\+file:|exec:)/;
const ARCHIVE = /\.(tgz|tar|tar\.gz)$/i;

/**
 * The local packages an install of the package.json at `path` installs too, which run their own
 * install scripts: its workspaces (package.json's `workspaces`, pnpm-workspace.yaml's
 * `packages`) and the folders it or they depend on (`file:../lib`, `link:`, `./lib`), theirs
 * too. Each is a package.json read for those scripts; what Latch cannot follow is said unread.
 * `home` is `~`.
 */
export function localPackages(path: string, read: ReadFile, home: string | undefined): Named[] {
  const named: Named[] = [];
  const unread = (why: string): Named[] => [...named, { unread: why, shell: true, what: 'a local package' }];
  const queue = [path];
  for (let at = 0; at < queue.length; at++) {
    const folder = dirname(queue[at]!);
    const manifest = parsedObject(read(queue[at]!).text);
    const folders: string[] = [];
    if (at === 0) {
      const workspaces = workspaceFolders(folder, manifest, read);
      if ('unread' in workspaces) return unread(workspaces.unread);
      folders.push(...workspaces.folders);
    }
    for (const spec of dependencySpecs(manifest)) {
      if (UNREAD_HERE.test(spec)) return unread(`it installs "${spec}", whose scripts Latch does not read`);
      const local = FROM_THIS_MACHINE.exec(spec);
      if (!local) continue;
      const written = local[1] ?? local[2]!;
      if (ARCHIVE.test(written))
        return unread('it installs a package from an archive, whose scripts Latch does not read');
      const fromHome = /^~(\/|$)/.test(written);
      if (fromHome && home === undefined) return unread('it installs a package from a folder of `~`');
      folders.push(fromHome ? join(home!, written.slice(1)) : resolve(folder, written));
    }
    for (const found of folders) {
      const file = join(found, 'package.json');
      if (queue.includes(file) || !existsSync(file)) continue;
      if (queue.length > MOST_LOCAL_PACKAGES)
        return unread(`more than the ${MOST_LOCAL_PACKAGES} local packages Latch looks through`);
      queue.push(file);
      named.push({ ...packageFile(undefined, INSTALLS, (name) => join(found, name)), local: true });
    }
  }
  return named;
}

/** The folders of the workspaces a project's package.json (`manifest`, in `folder`) and pnpm-workspace.yaml name. */
function workspaceFolders(
  folder: string,
  manifest: Record<string, unknown>,
  read: ReadFile,
): { folders: string[] } | { unread: string } {
  const pnpmWorkspace = read(join(folder, 'pnpm-workspace.yaml'));
  if (pnpmWorkspace.unread !== undefined && pnpmWorkspace.unread !== 'ENOENT')
    return { unread: `its pnpm-workspace.yaml: ${pnpmWorkspace.unread}` };
  const patterns = workspacePatterns(manifest, pnpmWorkspace.text);
  if (patterns === undefined) return { unread: 'its workspaces are named in a way Latch does not read' };
  const folders: string[] = [];
  for (const pattern of patterns) {
    const matched = foldersMatching(folder, pattern);
    if ('unread' in matched) return { unread: `its workspaces "${pattern}": ${matched.unread}` };
    folders.push(...matched.folders);
  }
  return { folders };
}

/**
 * The package.json files a runner runs `named`'s scripts in when an option or its command picks
 * the project's packages (`npm -w web test`, `pnpm --filter ./apps build`, `yarn workspace web
 * test`): by name, by folder (from `from`, the command's) or every one, among the workspaces of
 * each folder above `path` (the nearest package.json) that names some, since the runners do
 * not agree on which is the project's (pnpm takes the nearest pnpm-workspace.yaml whatever it
 * holds). What a pick leaves out is read as picked (`!web`, `-ws` without the root); a pick
 * Latch cannot follow is said unread. An install installs the whole project whichever it picks.
 */
export function pickedWorkspaces(
  named: Extract<Named, { path: string }>,
  path: string,
  from: string,
  read: ReadFile,
): Named[] {
  const { workspaces: pick, ...scripts } = named;
  if (named.installs || pick === undefined) return [{ ...scripts, path }];
  // The projects: each folder above that names workspaces. Their packages: the roots, their
  // workspaces, and theirs in turn (yarn's nested workspaces).
  // Each root's workspaces, found once: walking their patterns may read thousands of folders.
  const workspacesOf = new Map<string, string[]>();
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    const listed = workspaceFolders(folder, parsedObject(read(join(folder, 'package.json')).text), read);
    if ('unread' in listed) return unreadPackage(listed.unread);
    if (listed.folders.length > 0) workspacesOf.set(folder, listed.folders);
    if (dirname(folder) === folder) break;
  }
  const roots = [...workspacesOf.keys()];
  if (roots.length === 0) return unreadPackage('it picks workspaces, and Latch finds none around it');
  const packages: { folder: string; name?: string }[] = [];
  const queue = [...roots];
  let unnamed = false;
  for (let at = 0; at < queue.length; at++) {
    const folder = queue[at]!;
    const manifest = read(join(folder, 'package.json'));
    if (manifest.unread === 'ENOENT') continue;
    if (packages.length >= MOST_LOCAL_PACKAGES)
      return unreadPackage(`more than the ${MOST_LOCAL_PACKAGES} local packages Latch looks through`);
    const fields = parsedObject(manifest.text);
    const name = fields['name'];
    // A package.json Latch cannot read may hold any name.
    if (manifest.text === undefined || !Object.keys(fields).length) unnamed = true;
    packages.push({ folder, ...(typeof name === 'string' ? { name } : {}) });
    const known = workspacesOf.get(folder);
    const listed = known ? { folders: known } : workspaceFolders(folder, fields, read);
    if ('unread' in listed) return unreadPackage(listed.unread);
    for (const found of listed.folders) if (!queue.includes(found)) queue.push(found);
  }
  const including = 'every' in pick ? [] : pick.selectors.filter((selector) => !selector.startsWith('!'));
  const picked = 'every' in pick || pick.withRoot ? [...roots] : [];
  if ('every' in pick || including.length < pick.selectors.length)
    picked.push(...packages.map(({ folder }) => folder));
  for (const selector of including) {
    if (/\.\.\.|\^|\[/.test(selector)) return unreadPackage(`a filter Latch does not read: "${selector}"`);
    // A name or a pattern of names (`@acme/*`; pnpm takes `web` for a lone `@acme/web`), or a
    // folder and the workspaces below it (`./apps`, `{packages/web}`, `./apps/**`), from the
    // command's folder (pnpm) or the project's (npm).
    const written = selector.replace(/^\{(.*)\}$/s, '$1');
    if (unnamed) return unreadPackage("a workspace's package.json Latch cannot read for its name");
    const unders = [from, ...roots].map((base) => resolve(base, written.replace(/(\/\*\*?)+\/?$/, '')));
    const matches = packages.filter(
      ({ folder, name }) =>
        (name !== undefined && (globMatches(written, name) || name.endsWith(`/${written}`))) ||
        unders.some((under) => folder === under || folder.startsWith(`${under}/`)),
    );
    if (matches.length === 0) return unreadPackage(`no workspace Latch finds is "${selector}"`);
    picked.push(...matches.map(({ folder }) => folder));
  }
  // Each file in each package picked: its package.json, or its `server.js` (`npm start`).
  return [...new Set(picked)].map((folder) => ({
    ...scripts,
    path: join(folder, basename(named.path)),
    local: true,
  }));
}

/**
 * The package.json of the project whose workspace holds the package.json at `path`, if one
 * does: pnpm and yarn install the whole project from a workspace's folder, its scripts with it.
 */
export function workspaceRoot(path: string, read: ReadFile): string | undefined {
  const folder = dirname(path);
  for (let root = dirname(folder); ; root = dirname(root)) {
    const patterns = workspacePatterns(
      parsedObject(read(join(root, 'package.json')).text),
      read(join(root, 'pnpm-workspace.yaml')).text,
    );
    const holds = (pattern: string) => {
      const matched = foldersMatching(root, pattern);
      return 'folders' in matched && matched.folders.includes(folder);
    };
    if (patterns?.some(holds)) return join(root, 'package.json');
    if (dirname(root) === root) return undefined;
  }
}

const parsedObject = (text: string | undefined): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse((text ?? '').replace(/^\uFEFF/, ''));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {}; // reading it for its scripts says it does not parse
  }
};

const strings = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;

/** The workspace patterns of a package.json (an array, or yarn's `{ packages }`) and of pnpm-workspace.yaml. */
function workspacePatterns(
  manifest: Record<string, unknown>,
  pnpmWorkspace: string | undefined,
): string[] | undefined {
  const declared = manifest['workspaces'];
  const fromJson =
    declared === undefined
      ? []
      : (strings(declared) ?? strings((declared as { packages?: unknown } | null)?.packages));
  const fromYaml = pnpmWorkspace === undefined ? [] : yamlPackages(pnpmWorkspace);
  return fromJson && fromYaml && [...fromJson, ...fromYaml];
}

/** A YAML string written plainly or in quotes, and a block list's item (`- 'packages/*'`). */
const YAML_STRING = `(?:'([^']*)'|"([^"\\\\]*)"|([^\\s'"#,\\[\\]{}][^\\s#,\\]]*))`;
const YAML_ITEM = new RegExp(`^\\s*-\\s+${YAML_STRING}\\s*(#.*)?$`);
const YAML_FLOW_ITEM = new RegExp(`^\\s*${YAML_STRING}\\s*$`);

/**
 * pnpm-workspace.yaml's `packages:`, a block list (`- 'glob'` lines) or a flow list on its line
 * (`['a/*', 'b/*']`); undefined for any other form, which Latch does not guess at.
 */
function yamlPackages(text: string): string[] | undefined {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n?|\n/);
  const start = lines.findIndex((line) => /^(packages|'packages'|"packages")\s*:/.test(line));
  // No key read as `packages`: none, unless the file may name it in another form (a flow map, a
  // tag, a complex key, an escape, an anchor).
  if (start === -1)
    return lines.some((line) => !/^\s*#/.test(line) && /packages|[{}?!&\\]/.test(line)) ? undefined : [];
  const value = /^\S+\s*:\s*(.*?)\s*(#[^'"\]]*)?$/.exec(lines[start]!)?.[1] ?? '';
  const strings = (matches: (RegExpExecArray | null)[]) =>
    matches.every((match) => match !== null)
      ? matches.map((match) => match[1] ?? match[2] ?? match[3]!)
      : undefined;
  if (value.startsWith('[') && value.endsWith(']')) {
    const inside = value.slice(1, -1);
    return inside.trim() === '' ? [] : strings(inside.split(',').map((item) => YAML_FLOW_ITEM.exec(item)));
  }
  if (value !== '') return undefined;
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^\s*(#.*)?$/.test(line)) continue;
    if (!/^(\s|-(\s|$))/.test(line)) break; // the next key
    const item = strings([YAML_ITEM.exec(line)]);
    if (item === undefined) return undefined;
    items.push(...item);
  }
  return items;
}

/** The dependencies' specifiers, of every kind an install installs. */
function dependencySpecs(manifest: Record<string, unknown>): string[] {
  return ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'].flatMap((field) => {
    const table = manifest[field];
    return typeof table === 'object' && table !== null
      ? Object.values(table).filter((spec): spec is string => typeof spec === 'string')
      : [];
  });
}

/**
 * The folders a workspace pattern names (`packages/*`, `apps/web`, `components/**`), from `root`:
 * `*`, `?` and `[…]` within a name, `**` any folders below; never into `node_modules` or a folder
 * whose name starts with a dot, unless spelt. An exclusion (`!x`) adds none. Braces and extended
 * globs are not expanded, and more than MOST_FOLDERS_WALKED folders are not walked: unread.
 */
function foldersMatching(root: string, pattern: string): { folders: string[] } | { unread: string } {
  if (pattern.startsWith('!')) return { folders: [] };
  let folders = [root];
  let walked = 0;
  const below = (folder: string, segment: string, throughLinks = true): string[] => {
    return subfolders(folder, throughLinks)
      .filter(
        (name) =>
          name !== 'node_modules' &&
          (!name.startsWith('.') || segment.startsWith('.')) &&
          globMatches(segment, name),
      )
      .map((name) => join(folder, name));
  };
  for (const segment of pattern.split('/').filter((part) => part !== '' && part !== '.')) {
    if (/[{}()|]/.test(segment)) return { unread: 'a pattern Latch does not expand' };
    if (segment === '**') {
      // The folder itself and every one below it, breadth first.
      const all = [...folders];
      for (let next = 0; next < all.length; next++) {
        if (all.length > MOST_FOLDERS_WALKED) return { unread: 'more folders than Latch looks through' };
        all.push(...below(all[next]!, '*', false)); // as globs walk `**`: not through links
      }
      folders = all;
    } else if (!/[*?[]/.test(segment)) folders = folders.map((folder) => join(folder, segment));
    else folders = folders.flatMap((folder) => below(folder, segment));
    walked += folders.length;
    if (walked > MOST_FOLDERS_WALKED) return { unread: 'more folders than Latch looks through' };
  }
  return { folders };
}

const subfolders = (folder: string, throughLinks: boolean): string[] => {
  try {
    return readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || (throughLinks && entry.isSymbolicLink()))
      .map((entry) => entry.name);
  } catch {
    return [];
  }
};

/**
 * The makefile make reads, whose recipes are shell commands: the one `-f` names, else
 * `GNUmakefile`, `makefile` or `Makefile` (each that is there), in the folder `-C` names.
 */
export function makefiles(given: (string | undefined)[]): Named[] {
  // getopt takes any start of a long option that names one only (`--fil=x`, `--dir x`).
  const args = given.map((word) => {
    const long = /^--([\w-]+)(=.*)?$/s.exec(word ?? '');
    const full = long && ['file', 'makefile', 'directory'].find((name) => name.startsWith(long[1]!));
    return full && long[1]!.length >= (full === 'makefile' ? 3 : full === 'file' ? 1 : 2)
      ? `--${full}${long[2] ?? ''}`
      : word;
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

/**
 * The package.json a package runner uses when told one in `path`'s folder: the nearest there or
 * above it, as npm, yarn, pnpm and bun look for theirs. None: the runner finds none either.
 */
export function nearestPackageJson(path: string): string | undefined {
  let folder: string;
  try {
    folder = realpathSync(dirname(path)); // npm walks up from where the folder really is
  } catch {
    return path; // a folder that cannot be followed: reading it says why
  }
  for (; ; folder = dirname(folder)) {
    const file = join(folder, 'package.json');
    try {
      // A folder or a dangling link of that name is passed over, as the runners do.
      if (statSync(file, { throwIfNoEntry: false })?.isFile()) return file;
    } catch {
      return file; // not looked into: reading it says why
    }
    if (dirname(folder) === folder) return undefined;
  }
}

/**
 * The scripts of a package.json that run, in the order they run, each a line of shell commands;
 * `part` says which. One that does not parse is said unread: Latch does not guess what a runner
 * makes of it.
 */
export function scriptsOfPackage(
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
