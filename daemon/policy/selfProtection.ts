import { lstatSync } from 'node:fs';
import { basename, isAbsolute } from 'node:path';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import { shellCommand } from '../install/shellWords.ts';
import { actsBelow } from './actsBelow.ts';
import { changesTheLeash } from './changesTheLeash.ts';
import {
  ASSIGNMENT,
  commandWords,
  literalText,
  wordText,
  type SimpleCommand,
  type Word,
} from './commandWords.ts';
import { pathPattern } from './pathPattern.ts';
import { pathTouches, type Touch } from './pathTouches.ts';
import { namesTouch } from './namesTouch.ts';
import { LONG_COMMAND_BYTES, type Verdict } from './policy.ts';
import { gluedValues, valueAfterEquals } from './optionValues.ts';
import { placesFrom, type ProtectedPlaces } from './protectedPlaces.ts';
import { asWalked, PATH_MAX, realPath } from './realPath.ts';
import { replacesGlobalPackages } from './replacesGlobalPackages.ts';
import { patchedFiles, type RunScript } from './scriptsRun.ts';
import { placeByIdentity } from './sameFile.ts';
import { schedulesCode } from './schedulesCode.ts';
import { startsAgentUnhooked } from './startsAgentUnhooked.ts';
import {
  attachesToTheDaemon,
  inControlGroups,
  stopsTheDaemon,
  writesControlGroup,
} from './stopsTheDaemon.ts';
import { urlReadings } from './urlReadings.ts';
import { mayWrite, wordsTouch } from './wordsTouch.ts';

/** A gated call as self-protection sees it. */
export interface ProtectedCall {
  tool: string;
  paths: readonly string[];
  command?: string;
  /** The tool's input as JSON text. */
  input?: string;
  cwd?: string;
  /** It may act in another folder than `cwd`: Codex tells its hooks neither a command's `workdir` nor where a patch applies. */
  folderUnsure?: boolean;
  /** The script files the command runs (scriptsRun), read by the daemon. */
  scripts?: readonly RunScript[];
}

export type Guard = 'secrets' | 'files' | 'hooks' | 'stop' | 'commands';
/** Notes that a call touches what a guard keeps, and what a person types to approve it. */
/** What a call was found to touch: what a person types to approve it, and the place of Latch's it reaches. */
export type Note = (guard: Guard, target: string, reaches?: string) => void;

/** The rules, strongest first: the first one found decides. Only the secrets are refused outright. */
export const SELF_PROTECTION_RULES: Record<Guard, string> = {
  secrets: 'latch: its secrets',
  files: 'latch: its own files',
  hooks: 'latch: agent hook settings',
  stop: 'latch: stopping the daemon',
  commands: 'latch: its own commands',
};

/**
 * The longest tool input whose strings are read as shell words: reading them costs up to 0.3 s
 * at this size when built to be slow, and an input may be a MiB.
 */
const MOST_INPUT_READ_AS_WORDS = 16_000;

/** Claude Code's tools that only read what their path names; Grep also reads every file below it. */
const READS = new Set(['Read', 'NotebookRead', 'LS', 'Glob', 'Grep']);
/**
 * Codex's patch tool. Its `command` is a patch, not a shell command: the files it writes are its
 * headers' (the hook reads them into the call's paths), and read as shell words its lines would
 * match anything (`*** Add File: …` is a glob). Codex also takes `cd DIR && apply_patch <<'EOF'`,
 * whose folder only the shell's reading tells: a command that does not start as a patch is read
 * as one.
 */
export const PATCH_TOOL = 'apply_patch';

/** Whether a call's command is one a shell runs. */
export const runsInAShell = <Call extends { tool: string; command?: string | undefined }>(
  call: Call,
): call is Call & { command: string } =>
  call.command !== undefined &&
  (call.tool !== PATCH_TOOL || !call.command.trimStart().startsWith('*** Begin Patch'));

/** Tools whose paths and command are all they act on: their other input is content or prose. */
const KNOWN = new Set([
  ...READS,
  ...['Edit', 'MultiEdit', 'Write', 'NotebookEdit', 'Bash', 'exec', PATCH_TOOL],
  // These touch no file on this machine (but a `file:` URL WebFetch is given: URL_MEMBERS); a
  // subagent's (Task) own calls are gated one by one.
  ...['WebFetch', 'WebSearch', 'TodoWrite', 'TodoRead', 'Task', 'BashOutput', 'KillShell', 'ExitPlanMode'],
]);

/**
 * Latch guarding itself, on every gated call and beyond the policy's reach: the secrets
 * (`host-key.json`, `host-token`, `totp.json`, `state.db`) are never read by a call that names
 * them, whatever the spelling; Latch's home, its socket's folder, what runs as Latch and the
 * agents' hook settings are written only with a phone, at critical risk; so is any command that
 * names them, stops the daemon, changes the leash or starts an agent with other settings than
 * those. Reading Latch's other files, or the hook settings, is left to the policy. Undefined: nothing of
 * Latch's is touched. See docs/policy.md, "What Latch always protects".
 */
export function selfProtection(call: ProtectedCall, places: ProtectedPlaces): Verdict | undefined {
  const asGiven = judgedFromItsFolder(call, places);
  const folded = asGiven?.action === 'deny' ? undefined : foldedSpelling(call);
  const asFolded = folded && judgedFromItsFolder(folded, places);
  // A secret found only in the folded spelling is refused as the plain one is.
  return asFolded?.action === 'deny' ? asFolded : (asGiven ?? asFolded);
}

/**
 * The call with its letters folded as a file system that ignores case may fold them: `totp.jſon`
 * (a long s), `ｔｏｔｐ.json` (full-width), `.ßh` or `tot\u200cp.json` (a character HFS+ leaves
 * out) open Latch's files on such a volume, where lower case alone does not say so. Judged besides the call as given: folding only ever adds a
 * reading. Undefined when every string is ASCII, which folds to itself.
 */
function foldedSpelling(call: ProtectedCall): ProtectedCall | undefined {
  const texts = [
    call.command,
    call.input,
    call.cwd,
    ...call.paths,
    ...(call.scripts ?? []).map((s) => s.text),
  ];
  if (!texts.some((text) => text !== undefined && NOT_ASCII.test(text))) return undefined;
  // Only the letters beyond ASCII: `$HOME` stays the variable it names. Lower first, as `ẞ` is
  // `ß` before it is `ss`.
  const fold = (text: string) =>
    text
      .normalize('NFKC')
      .replace(IGNORED_IN_NAMES, '')
      .replace(new RegExp(NOT_ASCII, 'g'), (letter) => letter.toLowerCase().toUpperCase().toLowerCase());
  return {
    ...call,
    paths: call.paths.map(fold),
    ...(call.command !== undefined ? { command: fold(call.command) } : {}),
    ...(call.input !== undefined ? { input: fold(call.input) } : {}),
    ...(call.cwd !== undefined ? { cwd: fold(call.cwd) } : {}),
    ...(call.scripts
      ? {
          scripts: call.scripts.map((script) =>
            script.text === undefined ? script : { ...script, text: fold(script.text) },
          ),
        }
      : {}),
  };
}

const NOT_ASCII = /[^\x00-\x7f]/;
/** Characters macOS's HFS+ leaves out of a name it compares, and other invisible ones. */
const IGNORED_IN_NAMES = /[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]/g;

function judgedFromItsFolder(call: ProtectedCall, places: ProtectedPlaces): Verdict | undefined {
  const fromCwd = guardedAt(call, places);
  if (fromCwd || !call.folderUnsure || call.cwd === undefined) return fromCwd;
  // Read again from no folder, where a relative word may be any place it spells the end of
  // (`cat *` in Latch's home). Asked, not refused: the folder may well be the one given.
  const fromAnywhere = guardedAt({ ...call, cwd: undefined }, places);
  return fromAnywhere && { ...fromAnywhere, action: 'ask' };
}

function guardedAt(call: ProtectedCall, places: ProtectedPlaces): Verdict | undefined {
  const cwd = call.cwd !== undefined && isAbsolute(call.cwd) ? call.cwd : undefined;
  const real = rememberedRealPath(cwd);
  const found = new Map<Guard, { target: string; reaches?: string }>();
  const note: Note = (guard, target, reaches) => {
    if (!found.has(guard)) found.set(guard, { target, ...(reaches ? { reaches } : {}) });
  };
  const variables = { ...places.variables, ...(cwd ? { PWD: cwd } : {}) };
  const reading: Reading = { cwd, variables, places, real, note };
  // Grep without a path searches the folder it runs in, every file below it.
  const paths = call.tool === 'Grep' && call.paths.length === 0 && cwd ? [cwd] : call.paths;
  pathsTouch(paths, call.tool, reading);
  // A known tool's URL may be a `file:` URL, whose file it reads (`WebFetch`): read as an MCP
  // input's URI is, and judged as Read judges that path.
  pathsTouch(urlFiles(call), 'Read', reading);
  if (runsInAShell(call)) commandTouches(call.command, LONG_COMMAND_BYTES, reading);
  // What a script the command runs holds runs too (`bash deploy.sh`): a shell's script is read
  // as commands of its own, another language's as code, for what it names in quotes, and a
  // patch writes the files its headers name.
  for (const script of call.scripts ?? []) {
    if (script.text === undefined) continue;
    if (script.shell) commandTouches(script.text, MOST_INPUT_READ_AS_WORDS, reading);
    else codeTouches(script.text, reading);
    if (script.patch) pathsTouch(patchedFiles(script.text), 'Write', reading);
  }
  // An MCP or unknown tool may run or write anything, under whatever names its server gives its
  // input: each string in it is read as a command (`{"cmd": "kill …"}`, and an array of strings as
  // one argv), and one that may be a path as a file tool's path, which it may write. A longer
  // input is more than can be read so in time (16 kB built to be slow takes 0.3 s): like a long
  // command, it is searched for Latch's names and asked about.
  if (actsUnknown(call)) {
    const strings = inputStrings(call.input!).flatMap((text) => {
      const { texts, files } = urlReadings(text);
      return [...texts, ...files];
    });
    if (utf8Length(call.input!) > MOST_INPUT_READ_AS_WORDS) {
      namesTouch(searchedAsText(strings.join('\n')), places, note);
      note('files', `an input over ${MOST_INPUT_READ_AS_WORDS} bytes, more than Latch reads`);
    } else {
      const wholes = uniqueWords(strings.map((text) => [{ text: withHome(text, places), glob: false }]));
      namesTouch(wholes, places, note);
      // A folder it is given, it may act on whole (move it, delete it, search every file in it),
      // as `rm -r` or `grep -r` would: one above Latch's files reaches them. A tool that only
      // lists or reads (`list_directory ~`) does not.
      const below = mayActBelow(call.tool, call.input!);
      wordsTouch(wholes, cwd, places, real, note, undefined, () => below);
      // Read as a command, what a string does is asked about, never refused: it may be prose (an
      // issue that says `strace -p $(pgrep node)`). A secret it names is refused all the same.
      const asked: Reading = {
        ...reading,
        note: (guard, target, reaches) => note(guard === 'secrets' ? 'files' : guard, target, reaches),
      };
      for (const text of new Set(strings)) commandTouches(text, MOST_INPUT_READ_AS_WORDS, asked);
      const paths = [...new Set(strings.filter(mayBePath))];
      pathsTouch(paths, call.tool, reading);
      // Its server reads a relative path from its own folder, which no hook is told (the hook's
      // moves with a `cd`): one that climbs out of it may be any place it spells the end of.
      pathsTouch(
        paths.filter((path) => /(^|\/)\.\.(\/|$)/.test(path)),
        call.tool,
        { ...reading, cwd: undefined },
      );
    }
  }
  for (const guard of Object.keys(SELF_PROTECTION_RULES) as Guard[]) {
    const touched = found.get(guard);
    if (touched !== undefined)
      return {
        action: guard === 'secrets' ? 'deny' : 'ask',
        risk: 'critical',
        rule: SELF_PROTECTION_RULES[guard],
        ...touched,
      };
  }
  return undefined;
}

/** Where self-protection reads a call's words: the folder, the shell's variables, what it keeps. */
interface Reading {
  cwd: string | undefined;
  variables: Record<string, string>;
  places: ProtectedPlaces;
  real: (path: string) => string;
  note: Note;
}

/** A file tool writes the one path it names: a program put in a folder of them is written so. */
const toolWrites = (touch: Touch): Guard | undefined =>
  touch.place.kind === 'program-folder' && touch.relation !== 'above' ? 'files' : mayWrite(touch);

/** What the paths a file tool (or a patch) names touch of Latch's, each a name, not a pattern. */
function pathsTouch(paths: readonly string[], tool: string, { cwd, places, real, note }: Reading): void {
  const sameFileAs = paths.length > 0 ? placeByIdentity(placesFrom(places, cwd)) : undefined;
  for (const path of paths) {
    // As given: a tool's path is a name, not a pattern (a `*` in it is a `*`).
    const named = withHome(path, places);
    const pattern = pathPattern([{ text: named, glob: false }]);
    const absolute = isAbsolute(named) ? named : cwd && asWalked(cwd, named);
    // By the real path: the kernel opens no path longer than PATH_MAX, which a tool may shorten.
    const sameFile = absolute ? sameFileAs!(real(absolute)) : undefined;
    const touches = pathTouches(pattern, cwd, places, real, 'exactly');
    for (const touch of [...touches, ...(sameFile ? [sameFile] : [])]) {
      const guard = READS.has(tool) ? onRead(tool, touch) : toolWrites(touch);
      if (guard) note(guard, touch.place.target, touch.place.path);
    }
    // A control group's file written stops the daemon as `systemctl --user freeze` would.
    if (!READS.has(tool) && absolute && inControlGroups(real(absolute))) note('stop', 'latch daemon');
  }
}

/**
 * What a command's words touch of Latch's, and whether it stops the daemon, changes the leash or
 * starts an agent unhooked.
 */
function commandTouches(
  command: string,
  readAsWordsUpTo: number,
  { cwd, variables, places, real, note }: Reading,
): void {
  if (utf8Length(command) > readAsWordsUpTo) {
    // Longer than a phone shows, a command is asked at critical risk by the policy whatever it
    // names: only a secret's name can still make that a deny. Its text is searched as sent and
    // with its quotes and backslashes taken out; reading up to a MiB of it as shell words would
    // hold every other call up. So is a script's beyond what is read as words in time.
    namesTouch(searchedAsText(command), places, note);
  } else {
    const commands = commandWords(command, variables);
    const words = uniqueWords(commands.flat());
    // A bare `cd` goes home: what follows is read from there (`cd && cp /tmp/x .bashrc`).
    if (commands.some(goesHome)) words.push([{ text: places.variables['HOME']!, glob: false }]);
    // A value glued to a short option is only a guess at a path (`git log -S.latch` searches):
    // read as a path, it is not searched for Latch's names.
    const gluedTexts = new Set<string>();
    for (const command of commands) {
      const given = valuesGiven(command, cwd);
      for (const value of given.afterEquals) words.push([{ text: value, glob: false }]);
      for (const value of given.glued) gluedTexts.add(value);
    }
    const glued = [...gluedTexts].map((text): Word => [{ text, glob: false }]);
    // A path a program's own code names in quotes (`python3 -c "open('../.bashrc', 'a')"`, awk's
    // `print > "../.profile"`) is a word of its own: from the folder the command runs in, `.`
    // and `//` as the file system reads them, through links.
    const codePaths = [...words].flatMap((word) => quotedPaths(wordText(word)));
    for (const path of codePaths) words.push([{ text: withHome(path, places), glob: false }]);
    // What a program acts on below a folder: `grep -r x ~`, `rm -r ~`, `find -delete` from home.
    const below = actsBelow(commands, cwd, places.variables['HOME']);
    words.push(...below.implicit);
    if (below.unsure) note('files', below.unsure);
    namesTouch(words, places, note);
    // Each is a guess, read as a path at a cost: past what a person types, the command is asked
    // about (as one too long to read), not slowed for every other call.
    const guessed = glued.length > MOST_GLUED_VALUES ? [] : glued;
    if (guessed !== glued)
      note('files', `over ${MOST_GLUED_VALUES} values glued to options, more than Latch reads`);
    wordsTouch([...words, ...guessed], cwd, places, real, note, onlyLookedAt(commands), below.reaches);
    // A control group's file: written by a command, or named in code, which may write it.
    const reachesControlGroups = words.some((word) => inControlGroups(wordText(word)));
    if (
      commands.some(
        (command) =>
          stopsTheDaemon(command, places.daemonPid) || writesControlGroup(command, reachesControlGroups),
      ) ||
      codePaths.some(inControlGroups)
    )
      note('stop', 'latch daemon');
    if (commands.some((command) => attachesToTheDaemon(command, places.daemonPid)))
      note('secrets', 'latch daemon');
    const leash = commands.map(changesTheLeash).find(Boolean);
    if (leash) note('commands', leash);
    // An agent started with other settings may run its own tools outside every hook.
    const unhooked = startsAgentUnhooked(commands);
    if (unhooked) note('hooks', unhooked);
    // Code scheduled to run later runs outside every gate, whatever its files then hold.
    const scheduled = commands.map(schedulesCode).find(Boolean);
    if (scheduled) note('hooks', scheduled);
    // Latch installed as a global package is replaced by another global install of its name.
    const replaces = places.installedGlobally
      ? commands.map(replacesGlobalPackages).find(Boolean)
      : undefined;
    if (replaces) note('files', replaces);
  }
}

/** Programs whose `name=value` words set variables, which name no file. */
const SETS_VARIABLES = new Set(['env', 'export', 'declare', 'local', 'readonly', 'typeset', 'sudo', 'doas']);

/**
 * The values a program is given in its words, each a word of its own: after a `=`, an option's
 * (`cp --target-directory=$HOME x/.bashrc`) or any `name=` (`dd of=../.bashrc`,
 * `awk -v f=../.profile`), but not a variable the shell, `env` or `export` sets
 * (`export NVM_DIR=~/.nvm`), whose use the shell's reading follows; and glued to a short option
 * (`sort -oclaude-link`, `grep -fFILE`), where it may lead somewhere.
 */
function valuesGiven(
  command: SimpleCommand,
  cwd: string | undefined,
): { afterEquals: string[]; glued: string[] } {
  const texts = command.map(literalText);
  const program = texts.findIndex((text) => text === undefined || !ASSIGNMENT.test(text));
  if (program === -1) return { afterEquals: [], glued: [] };
  const name = basename(texts[program] ?? '');
  // What a program that only looks is given after a `=` is shown or searched
  // (`echo "NVM_DIR=~/.nvm" >> .env`); a file glued to its option is read (`grep -fFILE`).
  const looks = LOOKERS.has(name);
  const setsVariables = SETS_VARIABLES.has(name);
  const words = texts
    .slice(program + 1)
    .filter((text): text is string => text !== undefined && !(setsVariables && ASSIGNMENT.test(text)));
  return {
    afterEquals: looks ? [] : words.flatMap((text) => valueAfterEquals(text) ?? []),
    glued: words.flatMap(gluedValues).filter((value) => mayLeadSomewhere(value, cwd)),
  };
}

/**
 * Whether a tail of a short-option word may be a path that leads anywhere: from the root, home, a
 * variable or `.`, or through a name the folder holds. Every tail is a guess (`-xvf` gives `vf`
 * and `f`), and each guess read as a path costs a look; a name the folder lacks, written there,
 * can only be a new file beside the others.
 */
function mayLeadSomewhere(value: string, cwd: string | undefined): boolean {
  if (cwd === undefined || /^[/~.$]/.test(value)) return true;
  try {
    // lstat: a link that leads nowhere yet is a name too (writing through it makes its file).
    return lstatSync(asWalked(cwd, value.split('/')[0]!), { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true; // a name too long, no permission to look: a guess kept
  }
}

/** What another language's code names of Latch's: the paths it holds in quotes, and Latch's names. */
function codeTouches(code: string, { cwd, places, real, note }: Reading): void {
  const quoted = quotedPaths(code).map((path): Word => [{ text: withHome(path, places), glob: false }]);
  namesTouch([...searchedAsText(code), ...quoted], places, note);
  wordsTouch(quoted, cwd, places, real, note);
}

/**
 * Programs that only look at the paths they are given: a folder above a place that they name is
 * not moved (`ls ~/.config`, `du -sh ~/.nvm`). `find` is not one (`-delete`, `-exec`).
 */
const LOOKERS = new Set([
  ...['ls', 'du', 'stat', 'tree', 'file', 'wc', 'cat', 'head', 'tail', 'less', 'more', 'bat', 'eza'],
  ...['grep', 'rg', 'realpath', 'readlink', 'cd', 'pushd', 'pwd', 'test', '[', 'echo', 'printf'],
]);

const programName = (command: SimpleCommand) =>
  command[0] && literalText(command[0])?.split('/').at(-1)?.toLowerCase();

const goesHome = (command: SimpleCommand) =>
  command.length === 1 && ['cd', 'pushd'].includes(programName(command) ?? '');

/** Whether a word stands only in commands of programs that only look at what they are given. */
function onlyLookedAt(commands: SimpleCommand[]): (word: Word) => boolean {
  const looked = new Set<string>();
  const actedOn = new Set<string>();
  for (const command of commands) {
    const into = LOOKERS.has(programName(command) ?? '') ? looked : actedOn;
    for (const word of command) into.add(JSON.stringify(word));
  }
  return (word) => {
    const key = JSON.stringify(word);
    return looked.has(key) && !actedOn.has(key);
  };
}

/** A read reaches a secret named by its path; Grep reads every file below its folder too. */
function onRead(tool: string, { place, relation }: Touch): Guard | undefined {
  if (place.kind === 'secret' && relation !== 'above') return 'secrets';
  if (tool !== 'Grep' || place.kind !== 'home') return undefined;
  // In Latch's home or a folder of it (relay/ holds the relay's keys) it reads the secrets. From
  // above, ripgrep skips hidden folders like ~/.latch unless told not to; a custom home need not
  // be hidden: a phone decides.
  return relation === 'above' ? 'files' : 'secrets';
}

/** `~`, `$HOME` and `${HOME}` at a path's start, as a shell would have expanded them. */
/** How many quoted paths one word's code may add: more is more than a person writes. */
const MOST_QUOTED_PATHS = 64;

/** What a word's text holds in quotes that reads as a path: with a slash, or a dot first. */
function quotedPaths(text: string): string[] {
  const paths: string[] = [];
  for (const [, , quoted] of text.matchAll(/(["'`])([^"'`\n]{1,4096})\1/g))
    if ((quoted!.includes('/') || quoted!.startsWith('.')) && paths.push(quoted!) >= MOST_QUOTED_PATHS) break;
  return paths;
}

function withHome(path: string, places: ProtectedPlaces): string {
  return path.replace(/^(~|\$HOME|\$\{HOME\})(?=\/|$)/, () => places.variables['HOME'] ?? '~');
}

/** How many values glued to short options a command's words are read for (`-oFILE`, `-C..`). */
const MOST_GLUED_VALUES = 64;

/**
 * Words of an MCP tool's own name (after its server's) that say it only lists or reads what it is
 * given (`list_directory`, `get_file_contents`), so that a folder it is given is not all that is
 * below it: unless another word says it acts (`get_and_delete`, `get_archive`, `read_all_files`),
 * or a word or its input says it goes down the tree (`read_directory_recursive`, `"depth": 5`).
 */
const ONLY_LOOKS = new Set([
  'list',
  'ls',
  'get',
  'read',
  'view',
  'show',
  'stat',
  'info',
  'describe',
  'fetch',
]);
const ACTS = new Set([
  ...['delete', 'remove', 'rm', 'rmdir', 'unlink', 'trash', 'purge', 'clean', 'wipe', 'erase', 'move', 'mv'],
  ...['rename', 'copy', 'cp', 'sync', 'rsync', 'archive', 'zip', 'tar', 'extract', 'download', 'clone'],
  ...['write', 'create', 'save', 'set', 'update', 'put', 'add', 'upload', 'chmod', 'chown', 'exec', 'run'],
  ...['search', 'grep', 'find', 'all', 'recursive', 'recursively', 'recurse', 'tree', 'walk'],
]);
const RECURSIVE_INPUT =
  /"(recursive(ly)?|recurse|deep)"\s*:\s*(true|"true"|"yes"|1)(?!\w)|"(depth|max_?depth|maxDepth)"\s*:\s*"?([2-9]|\d{2,})/i;

/** Whether an unknown tool may act on everything below a folder it is given: unless it only looks. */
function mayActBelow(tool: string, input: string): boolean {
  const words = (tool.split('__').at(-1) ?? tool)
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  const onlyLooks = words.some((word) => ONLY_LOOKS.has(word)) && !words.some((word) => ACTS.has(word));
  return !onlyLooks || RECURSIVE_INPUT.test(input);
}

/** The members of a known tool's input that hold a URL. */
const URL_MEMBERS: Readonly<Record<string, readonly string[]>> = { WebFetch: ['url'] };

/** The files a known tool's URLs name as `file:` URLs. */
function urlFiles(call: ProtectedCall): string[] {
  const members = URL_MEMBERS[call.tool];
  if (members === undefined || call.input === undefined) return [];
  let input: unknown;
  try {
    input = JSON.parse(call.input);
  } catch {
    // Cut short, or not JSON: each `file:` in it, to the next quote, may start its URL.
    return [...call.input.matchAll(/file:[^"]*/gi)].flatMap(([url]) => urlReadings(url).files);
  }
  if (typeof input !== 'object' || input === null) return [];
  return members.flatMap((member) => {
    const url = (input as Record<string, unknown>)[member];
    return typeof url === 'string' ? urlReadings(url).files : [];
  });
}

/** A tool Latch does not know, with an input: what its strings do is its server's to say. */
const actsUnknown = (call: ProtectedCall) => call.input !== undefined && !KNOWN.has(call.tool);

/** A string of one line that may name a file: `/…`, `~…`, `./…`, `.claude`, `a/b`. */
const mayBePath = (text: string) =>
  !text.includes('\n') && utf8Length(text) <= PATH_MAX && /^[~.]|\//.test(text);

/** An array of strings, such as an argv. */
const isArgv = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string');

/** Every string in a JSON text, members' names included, or the text itself when it is not JSON (cut short, for one). */
function inputStrings(input: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(input);
  } catch {
    return [input];
  }
  const strings: string[] = [];
  // A stack, not recursion: the input's depth is the agent's to choose.
  const stack = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') strings.push(next);
    // An array of strings may be an argv (`{"args": ["kill", "4242"]}`), or the arguments of a
    // program its object names beside it (`{"command": "gdb", "args": ["-p", "4242"]}`): each
    // read as one command too.
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) {
      const members = Object.values(next);
      for (const argv of members.filter(isArgv))
        for (const program of members.filter((member) => typeof member === 'string'))
          strings.push(shellCommand([program, ...argv]));
    }
    if (Array.isArray(next) && next.length > 1 && isArgv(next)) strings.push(shellCommand(next));
    if (typeof next === 'object' && next !== null)
      for (const [key, value] of Object.entries(next)) {
        // A member's name is read too: `{"files": {"~/.latch/host-key.json": true}}` names a file.
        if (!Array.isArray(next)) stack.push(key);
        stack.push(value);
      }
  }
  return strings;
}

/** A text too long to read as shell words, as sent and with its quotes and backslashes taken out. */
const searchedAsText = (text: string): Word[] => [
  [{ text, glob: false }],
  [{ text: text.replace(/['"\\]/g, ''), glob: false }],
];

/** Each word once: `cat a a a …` is judged as `cat a`. */
const uniqueWords = (words: Word[]) => [
  ...new Map(words.map((word) => [JSON.stringify(word), word])).values(),
];

/** realPath, remembered for one call: a command's words share their folders. */
function rememberedRealPath(cwd: string | undefined): (path: string) => string {
  const known = new Map<string, string>();
  const walk = { looks: new Map(), ...(cwd !== undefined ? { processFolder: cwd } : {}) };
  return (path) => {
    let resolved = known.get(path);
    if (resolved === undefined) known.set(path, (resolved = realPath(path, walk)));
    return resolved;
  };
}
