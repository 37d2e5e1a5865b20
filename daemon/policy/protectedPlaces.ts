import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { escapeRegExp } from '../../shared/text/escapeRegExp.ts';
import { homeFolder, latchFiles, latchHome, socketPath } from '../config/paths.ts';
import { AGENTS, type Agent } from '../install/agents.ts';
import { agentConfigDir } from '../install/settingsPath.ts';
import { gitConfigFiles } from './gitConfigFiles.ts';
import { latchProgram } from './latchProgram.ts';
import { realPath } from './realPath.ts';
import { sourcedStartupFiles, ZSH_FILES } from './sourcedStartupFiles.ts';
import { userMayWrite } from './userMayWrite.ts';

/**
 * What a place is to Latch: a secret (never read), its home, its socket's folder or a file of
 * its program (written only with a phone), an agent's config folder or a file in it that holds
 * hooks (the same); a folder whose programs run as the user in place of others (written through
 * a file tool only with a phone; a shell command that names it, `ls ~/.local/bin`, is the policy's).
 */
export type PlaceKind =
  'secret' | 'home' | 'socket' | 'program' | 'program-folder' | 'agent-dir' | 'hook-file';

export interface Place {
  kind: PlaceKind;
  /** Its path's parts, in lower case (see `sameName`). */
  parts: string[];
  /** Its path as configured; none for a project form (`.claude/settings.json`), which is anywhere. */
  path?: string;
  /** What a person types to approve a change to it. */
  target: string;
  /**
   * Found only by its whole path, never by its last names from an unknown folder: they are
   * everyday words (`git/config`, `/etc/codex`, `~/.config/xonsh`, which `xonsh -c …` names).
   */
  whole?: true;
}

/** Latch's own places, fixed when the daemon starts, from the environment it runs in. */
export interface ProtectedPlaces {
  /** Absolute places, each as configured and as the file system resolves it. */
  places: Place[];
  /** Project forms (`<any>/.claude/settings.json`): matched as the last parts of a path. */
  tails: Place[];
  /** What `$HOME`, `$LATCH_HOME`, `$XDG_RUNTIME_DIR`, `$CLAUDE_CONFIG_DIR` and `$CODEX_HOME` hold. */
  variables: Record<string, string>;
  /** Names looked for anywhere in a command's words, whatever folder it runs in. */
  names: { secrets: RegExp; files: RegExp; hooks: RegExp };
  daemonPid: number;
  /** Latch runs from a package in a node_modules folder: a package manager can put another there. */
  installedGlobally: boolean;
}

/** The folder an agent keeps in a project, and the files there and in its user folder that can hold hooks. */
const AGENT_FILES: Record<Agent, { folder: string; files: string[] }> = {
  'claude-code': { folder: '.claude', files: ['settings.json', 'settings.local.json'] },
  codex: { folder: '.codex', files: ['hooks.json', 'config.toml'] },
};

/**
 * A project's MCP servers, which Claude Code starts outside any gate. It asks before it starts a
 * server the first time, by name: a changed command under an approved name runs without asking.
 */
const PROJECT_MCP_FILE = '.mcp.json';

/**
 * The shell start-up files that run before a hook command does, as the same user: Codex runs
 * hooks with the user's `$SHELL -lc`, a login shell (sh's and bash's profiles, zsh's `.zshenv`,
 * `.zprofile` and `.zlogin`, fish's config, xonsh's and nushell's rc files, ksh's, mksh's and
 * elvish's), and most profiles read the rc files; and what they source in turn. Edited, an
 * `exit 0` in one lets every tool run before Latch's hook starts. And the files a login or a
 * session runs as the user, outside any gate. The system's (`/etc/profile`, `/etc/zsh/`), where
 * the user may write them (root may).
 */
function startupFiles(
  env: NodeJS.ProcessEnv,
  systemRoot: string,
): { files: string[]; frameworks: string[]; whole: Set<string> } {
  const home = homeFolder(env);
  const zsh = env['ZDOTDIR'] || home;
  const config = env['XDG_CONFIG_HOME'] || join(home, '.config');
  const data = env['XDG_DATA_HOME'] || join(home, '.local', 'share');
  const fish = join(config, 'fish');
  const fishData = join(data, 'fish');
  const files = [
    ...['.profile', '.bash_profile', '.bash_login', '.bashrc'].map((file) => join(home, file)),
    // zsh runs a file's compiled twin (`.zshenv.zwc`) in its stead when it is newer.
    ...ZSH_FILES.flatMap((file) => [join(zsh, file), join(zsh, `${file}.zwc`)]),
    join(fish, 'config.fish'),
    join(fish, 'conf.d'),
    // Universal variables: `set -Ux NODE_OPTIONS …` there reaches every fish.
    join(fish, 'fish_variables'),
    // fish loads a function from here before any other folder, when a start-up file calls it.
    join(fish, 'functions'),
    // Where fish also looks for start-up scripts and functions, in the user's data folder.
    join(fishData, 'vendor_conf.d'),
    join(fishData, 'vendor_functions.d'),
    // The other shells a person may name in SHELL, which Codex runs as `$SHELL -lc` (review kc):
    // xonsh's rc files and `rc.d/`, nushell's `env.nu`, `config.nu`, `login.nu` and autoload
    // folders (in its config and data folders, and macOS's), ksh's and mksh's `ENV` files,
    // elvish's `rc.elv` and its modules, csh's and tcsh's, and PowerShell's profiles.
    ...['.xonshrc', '.kshrc', '.mkshrc', '.elvish', '.cshrc', '.tcshrc', '.login'].map((file) =>
      join(home, file),
    ),
    // A graphical session's environment, which the agent and its hooks inherit at the next login.
    ...['.xsessionrc', '.xprofile', '.pam_environment'].map((file) => join(home, file)),
    // What a login or a session runs as the user later, outside any gate (review O): at its
    // start (`.xinitrc`, `.xsession`, autostart entries, Plasma's scripts, ssh's `rc`), or its end.
    ...['.xinitrc', '.xsession', '.bash_logout', join('.ssh', 'rc')].map((file) => join(home, file)),
    join(zsh, '.zlogout'),
    ...['autostart', join('plasma-workspace', 'env'), join('plasma-workspace', 'shutdown')].map((folder) =>
      join(config, folder),
    ),
  ];
  const whole = [
    ...['xonsh', 'nushell', 'elvish', 'powershell'].map((shell) => join(config, shell)),
    ...['nushell', 'elvish'].map((shell) => join(data, shell)),
    join(home, 'Library', 'Application Support', 'nushell'),
    // A shell Latch does not know, by SHELL: its rc file and its config folder, by its name.
    ...otherShellFiles(env['SHELL'], home, config),
    ...SYSTEM_STARTUP_FILES.map((path) => join(systemRoot, path)).filter(userMayWrite),
  ];
  const sourced = sourcedStartupFiles([...files, ...whole], home);
  return {
    files: [...files, ...whole, ...sourced.files],
    frameworks: sourced.frameworks,
    whole: new Set(whole),
  };
}

/** The shells whose start-up files startupFiles names. */
const KNOWN_SHELLS = new Set([
  ...['sh', 'dash', 'bash', 'zsh', 'fish', 'xonsh', 'nu'],
  ...['ksh', 'ksh93', 'mksh', 'elvish', 'csh', 'tcsh', 'pwsh'],
]);

/** For a shell by another name (`/usr/bin/oil`): `~/.oilrc` and `~/.config/oil`. */
function otherShellFiles(shell: string | undefined, home: string, config: string): string[] {
  const name = shell ? basename(shell) : '';
  if (!/^[\w.+-]{1,64}$/.test(name) || KNOWN_SHELLS.has(name)) return [];
  return [join(home, `.${name}rc`), join(config, name)];
}

/**
 * The system's shell start-up files, every user's login runs them (root's too): guarded where
 * the daemon's user may write them.
 */
const SYSTEM_STARTUP_FILES = [
  ...['profile', 'profile.d', 'bash.bashrc', 'bashrc', 'bash.bash_logout', 'environment'],
  ...['zsh', 'zshenv', 'zprofile', 'zshrc', 'zlogin', 'zlogout', 'fish', 'xonsh', 'xonshrc'],
  ...['ksh.kshrc', 'mkshrc', 'shinit', 'csh.cshrc', 'csh.login', 'security/pam_env.conf'],
].map((path) => join('etc', path));

/**
 * The system's places an agent's own settings or code are read from, which outrank or reach
 * every user's: Claude Code's managed settings and MCP servers (`disableAllHooks` there turns
 * Latch's hook off), Codex's system config and requirements; what every program loads first
 * (`/etc/ld.so.preload`); the units every user's systemd starts, and launchd's agents. Guarded
 * where the daemon's user may write them: as root, always.
 */
const SYSTEM_AGENT_DIRS = [
  join('etc', 'claude-code'),
  join('Library', 'Application Support', 'ClaudeCode'),
  join('etc', 'codex'),
];
const SYSTEM_PROGRAMS = [
  join('etc', 'ld.so.preload'),
  join('etc', 'systemd', 'user'),
  join('etc', 'systemd', 'user.conf'),
  join('etc', 'xdg', 'systemd', 'user'),
  join('usr', 'lib', 'systemd', 'user'),
  join('Library', 'LaunchAgents'),
  join('Library', 'LaunchDaemons'),
];

/** The folders of programs where a user-writable one is common outside the home folder, on another PATH than the daemon's. */
const COMMON_PROGRAM_FOLDERS = [
  ...['opt/homebrew/bin', 'opt/homebrew/sbin', 'usr/local/bin', 'usr/local/sbin'],
  ...['home/linuxbrew/.linuxbrew/bin', 'home/linuxbrew/.linuxbrew/sbin'],
];

/**
 * Where the user's service manager reads how to start the daemon, and the environment it starts
 * it in (systemd's user units, drop-ins, `user.conf` and `environment.d`, in the user's config,
 * data and runtime folders; launchd's agents): edited, the daemon's next start runs what the
 * agent wrote there (`NODE_OPTIONS=--require …`), with its keys.
 */
function serviceFiles(env: NodeJS.ProcessEnv): string[] {
  const home = homeFolder(env);
  const config = env['XDG_CONFIG_HOME'] || join(home, '.config');
  const data = env['XDG_DATA_HOME'] || join(home, '.local', 'share');
  return [
    join(config, 'systemd'),
    join(config, 'environment.d'),
    join(data, 'systemd', 'user'),
    ...(env['XDG_RUNTIME_DIR'] ? [join(env['XDG_RUNTIME_DIR'], 'systemd')] : []),
    join(home, 'Library', 'LaunchAgents'),
  ];
}

/**
 * Paths are compared ignoring case on every platform: macOS's file system usually ignores it
 * (`~/.LATCH/TOTP.JSON` opens the secret there), and on Linux a path that differs from Latch's
 * only in case is rare enough that asking a phone about it costs nothing.
 */
export const sameName = (name: string) => name.toLowerCase();

const pathParts = (path: string) => path.split('/').filter(Boolean).map(sameName);

// A name counts where it stands alone: `~/.latch/x`, `open(".latch")`, not `my.latch` or `.latchrc`.
/**
 * Copies of the state database in Latch's home (`state.db.replaced-…`, which `latch init --reset`
 * keeps, or one the person made): each holds the key that makes the ids the relay saw readable, so
 * each is a secret like the database itself. Read when the daemon starts, as a reset needs.
 */
function stateCopies(home: string): string[] {
  const state = basename(latchFiles(home).state);
  try {
    return readdirSync(home)
      .filter((name) => name.startsWith(`${state}.`) || name.startsWith(`${state}-`))
      .map((name) => join(home, name));
  } catch {
    return []; // No home yet: nothing to copy.
  }
}

const anywhere = (names: string[]) =>
  new RegExp(`(?<![\\w.-])(${names.map(escapeRegExp).join('|')})(?![\\w.-])`, 'i');

/** A place as configured and as the file system resolves it: ~/.claude may be a link into dotfiles. */
function placeForms(kind: PlaceKind, path: string, whole = false): Place[] {
  return [...new Set([path, realPath(path)])].map((form) => ({
    kind,
    parts: pathParts(form),
    path: form,
    target: basename(path),
    ...(whole ? { whole: true as const } : {}),
  }));
}

/** The files in an agent's config folder that hold hooks, and the folder: the closest named first. */
function agentPlaces(agent: Agent, folder: string): Place[] {
  return [
    ...AGENT_FILES[agent].files.flatMap((file) => placeForms('hook-file', join(folder, file))),
    ...placeForms('agent-dir', folder),
  ];
}

/**
 * The places with an agent's config folder as the agent's own environment names it
 * (CLAUDE_CONFIG_DIR, CODEX_HOME), which need not be the daemon's: the hook passes it on. It
 * only adds places, so a caller that names another folder gains nothing.
 */
export function withAgentConfigDir(places: ProtectedPlaces, agent: Agent, folder: string): ProtectedPlaces {
  const resolved = resolve(folder);
  const known = places.places.some((place) => place.kind === 'agent-dir' && place.path === resolved);
  return known ? places : { ...places, places: [...places.places, ...agentPlaces(agent, resolved)] };
}

/** Latch's own places, and the project forms as places in one folder (the one a call runs in). */
export const placesFrom = (places: ProtectedPlaces, folder: string | undefined): Place[] =>
  folder === undefined
    ? places.places
    : [...places.places, ...places.tails.map((place) => ({ ...place, path: join(folder, ...place.parts) }))];

/**
 * The places with the /proc folders of the daemon's threads: a thread's id names the daemon there
 * as its pid does (`/proc/<tid>/environ`, its open files). Threads come and go, so they are read
 * when a call is judged.
 */
export function withDaemonThreads(places: ProtectedPlaces): ProtectedPlaces {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${places.daemonPid}/task`).filter((id) => id !== String(places.daemonPid));
  } catch {
    return places; // no /proc (not Linux), or the daemon is gone
  }
  return {
    ...places,
    places: [...places.places, ...threads.flatMap((id) => placeForms('secret', `/proc/${id}`))],
  };
}

export function protectedPlaces(
  env: NodeJS.ProcessEnv = process.env,
  daemonPid: number = process.pid,
  program: readonly string[] = latchProgram(),
  /** Where the system's places are: `/`, another folder in tests. */
  systemRoot = '/',
): ProtectedPlaces {
  const home = resolve(latchHome(env));
  const files = latchFiles(home);
  const socket = resolve(socketPath(env));
  const secrets = new Set([
    files.hostKey,
    files.hostToken,
    files.totp,
    files.state,
    `${files.state}-wal`,
    `${files.state}-shm`,
    files.relaySecrets,
    ...stateCopies(home),
  ]);
  const agentDirs = {
    'claude-code': resolve(agentConfigDir('claude-code', env)),
    codex: resolve(agentConfigDir('codex', env)),
  };

  const places: Place[] = [];
  const add = (kind: PlaceKind, path: string, whole = false) => places.push(...placeForms(kind, path, whole));
  for (const secret of secrets) add('secret', secret);
  // The daemon's own /proc folder: its memory and environment, and its open files (state.db).
  add('secret', `/proc/${daemonPid}`);
  add('home', home);
  add('socket', dirname(socket));
  const system = (paths: string[]) => paths.map((path) => join(systemRoot, path)).filter(userMayWrite);
  const folders = programFolders(env, systemRoot);
  for (const path of [
    ...program,
    ...serviceFiles(env),
    ...agentPrograms(env, folders),
    ...system(SYSTEM_PROGRAMS),
  ])
    add('program', path);
  const startup = startupFiles(env, systemRoot);
  for (const folder of [...folders, ...startup.frameworks]) add('program-folder', folder);
  for (const agent of AGENTS) places.push(...agentPlaces(agent, agentDirs[agent]));
  for (const folder of system(SYSTEM_AGENT_DIRS)) add('agent-dir', folder, true);
  // Claude Code's user-wide MCP servers, which it starts outside any gate, live beside ~/.claude.
  add('hook-file', join(homeFolder(env), '.claude.json'));
  for (const file of startup.files) add('hook-file', file, startup.whole.has(file));
  // The git config git reads everywhere: code it names runs on the allowed `git status`.
  const pathFolders = [
    ...(env['PATH'] ?? '').split(':').filter((folder) => folder.startsWith('/')),
    ...folders,
  ];
  for (const file of gitConfigFiles(env, homeFolder(env), pathFolders, systemRoot))
    add('hook-file', file, true);
  const tails = [
    ...AGENTS.flatMap((agent): Place[] => {
      const { folder, files } = AGENT_FILES[agent];
      return [
        { kind: 'agent-dir', parts: [sameName(folder)], target: folder },
        ...files.map((file): Place => ({ kind: 'hook-file', parts: [sameName(folder), file], target: file })),
      ];
    }),
    { kind: 'hook-file', parts: [PROJECT_MCP_FILE], target: PROJECT_MCP_FILE } satisfies Place,
  ];
  return {
    places,
    tails,
    variables: {
      HOME: homeFolder(env),
      LATCH_HOME: home,
      CLAUDE_CONFIG_DIR: agentDirs['claude-code'],
      CODEX_HOME: agentDirs.codex,
      ...(env['XDG_RUNTIME_DIR'] ? { XDG_RUNTIME_DIR: env['XDG_RUNTIME_DIR'] } : {}),
    },
    names: {
      secrets: anywhere([...secrets].map((path) => basename(path))),
      files: anywhere([basename(home), basename(socket)]),
      hooks: anywhere([
        ...AGENTS.flatMap((agent) =>
          AGENT_FILES[agent].files.map((file) => `${AGENT_FILES[agent].folder}/${file}`),
        ),
        PROJECT_MCP_FILE,
      ]),
    },
    daemonPid,
    installedGlobally: program.some((path) => path.endsWith('latch.cjs') && path.includes('/node_modules/')),
  };
}

/**
 * The folders of programs the daemon's user may write: of the daemon's PATH, and the user's own
 * that login profiles put first (`~/.local/bin`, `~/bin`), and those where another PATH commonly
 * has one (Homebrew's, a chowned `/usr/local/bin`, Linuxbrew's): a program put there runs in place
 * of the one its name meant, as the user, outside any gate. A login shell runs some before
 * Codex's hook (Debian's /etc/profile runs `id`, a profile evals `pyenv init` or `brew shellenv`),
 * an allowed `ls` or `git status` runs it, and `#!/usr/bin/env node` starts the agents with it.
 * Judged by who may write them, not where they are (review kc): as root, every one. Not the home
 * folder itself, nor a project's (a checkout, its packages' or a virtual environment's `bin`).
 */
function programFolders(env: NodeJS.ProcessEnv, systemRoot: string): string[] {
  const home = homeFolder(env);
  const onPath = [
    ...(env['PATH'] ?? '').split(':').filter((folder) => folder.startsWith('/')),
    join(home, '.local', 'bin'),
    join(home, 'bin'),
  ].map((folder) => resolve(folder));
  const common = COMMON_PROGRAM_FOLDERS.map((folder) => join(systemRoot, folder)).filter(existsSync);
  return [...new Set([...onPath, ...common])].filter(
    (folder) =>
      // Not the home folder, nor one that holds it, nor `/`: every file tool's write would ask.
      folder !== '/' &&
      !`${home}/`.startsWith(`${folder}/`) &&
      (folder.startsWith(`${home}/`) || userMayWrite(folder)) &&
      // A project's, or a project's packages': its files are the agent's work, not the login's.
      !folder.split('/').includes('node_modules') &&
      !['pyvenv.cfg', 'conda-meta'].some((made) => existsSync(join(dirname(folder), made))) &&
      !existsSync(join(folder, '.git')),
  );
}

/** The folder of an agent's npm package, in a path inside it. */
const AGENT_PACKAGE = /^(.*\/node_modules\/@(?:anthropic-ai\/claude-code|openai\/codex))(?:\/|$)/;

/**
 * The agents' own programs, which run Latch's hooks: replaced by a wrapper that starts them with
 * other settings (`--settings '{"disableAllHooks":true}'`), every later session would pass no
 * hook. A `claude` and a `codex` in each folder of the daemon's PATH (one put in a folder before
 * theirs runs in their stead; a file tool's writes to one in the home folder ask, see programFolders), where
 * each that is there leads, and the npm package it belongs to; and where Claude Code's own
 * installer puts it (`~/.local/bin/claude`, a link into
 * `~/.local/share/claude/versions/`), which a daemon started by a service may not have on its
 * PATH.
 */
function agentPrograms(env: NodeJS.ProcessEnv, programFolders: readonly string[]): string[] {
  const home = homeFolder(env);
  const folders = [
    ...(env['PATH'] ?? '').split(':').filter((folder) => folder.startsWith('/')),
    ...programFolders,
  ];
  const programs = folders.flatMap((folder) => ['claude', 'codex'].map((name) => join(folder, name)));
  const followed = programs.flatMap((path) => {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return []; // not there
    }
    const agentPackage = AGENT_PACKAGE.exec(real)?.[1];
    return [real, ...(agentPackage ? [agentPackage] : [])];
  });
  return [...new Set([...programs, ...followed, join(home, '.local', 'share', 'claude')])];
}
