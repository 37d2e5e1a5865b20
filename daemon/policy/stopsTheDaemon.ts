import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { literalText, writtenByRedirect, type SimpleCommand, type Word } from './commandWords.ts';

/** Programs that run a command with their input in place of some of its words. */
const SUBSTITUTE = new Set(['xargs', 'parallel', 'find']);

/**
 * Programs that signal or slow processes by name or pattern (`snice` as `renice` does): the
 * daemon's name is one a pattern can hit.
 */
const BY_NAME = new Set(['pkill', 'killall', 'killall5', 'skill', 'snice']);

/** What `systemctl` only answers about: its other verbs act. */
const QUESTIONS = new Set([
  'status',
  'show',
  'cat',
  'help',
  'is-active',
  'is-enabled',
  'is-failed',
  'is-system-running',
  'list-units',
  'list-unit-files',
  'list-timers',
  'list-sockets',
  'list-jobs',
  'list-dependencies',
  'show-environment',
  'get-default',
]);

/** systemctl's options that take the next word as their value (`-n 5`, `--property X`). */
const WITH_VALUE =
  /^(-[nptosHM]|--(lines|property|type|output|signal|host|machine|state|job-mode|kill-whom|kill-value|root|what|when|message|timestamp|drop-in|image|image-policy|reboot-argument|boot-loader-entry|boot-loader-menu|preset-mode|legend|check-inhibitors))$/;

/** The verb in systemctl's arguments: the first word that is no option nor an option's value. */
function systemctlVerb(args: (string | undefined)[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === undefined || !arg.startsWith('-')) return arg;
    if (WITH_VALUE.test(arg)) i++;
  }
  return undefined;
}

/** A unit or service name that says latch, that only running tells, or a pattern systemctl matches itself (`'l?tch'`). */
const maySayLatch = (text: string | undefined) => text === undefined || /latch|[*?[]/i.test(text);

/** A word as a program name: its last path part, in lower case (`/bin/KILL` runs kill on macOS). */
const programName = (word: Word) => literalText(word)?.split('/').at(-1)?.toLowerCase();

/**
 * A control group's files that the user's service manager lets the user write (the daemon's own
 * group and those above it): written, they freeze it, kill it, move it or starve it, as
 * `systemctl --user freeze` would. Read, they only tell.
 */
const CGROUP_CONTROL =
  /^(cgroup\.(freeze|kill|procs|threads|type|subtree_control|max\.depth|max\.descendants)|memory\.(max|high|low|min|swap\.max|zswap\.max|oom\.group|reclaim)|cpu\.(max|weight|weight\.nice|idle)|cpuset\.(cpus|mems)|pids\.max|io\.(max|weight|latency))$/;
/** Programs that only read the files they are given (not `find`, `tree` or `xxd`: `-fprintf`, `-o`, `-r` write). */
const READERS = new Set([
  'cat',
  'head',
  'tail',
  'less',
  'more',
  'grep',
  'rg',
  'ls',
  'stat',
  'wc',
  'file',
  'du',
]);
/** libcgroup's tools that change control groups (`cgset -r cgroup.freeze=1 …`). */
const CGROUP_TOOLS = new Set(['cgset', 'cgcreate', 'cgdelete', 'cgclassify']);

/** Whether a path is in the control groups' file system. */
export const inControlGroups = (path: string) => path === CGROUPS || path.startsWith(`${CGROUPS}/`);
const CGROUPS = '/sys/fs/cgroup';

/**
 * Whether a command may write a control group's file: a path in their file system, or a control
 * file's name where the command line reaches that file system (`cd /sys/fs/cgroup/x && echo 1 >
 * cgroup.kill`), that it is given or redirects to, unless it only reads it (`cat …/memory.max`);
 * there, a redirect to a path only running tells; or a libcgroup tool.
 */
export function writesControlGroup(command: SimpleCommand, lineReachesControlGroups: boolean): boolean {
  const texts = command.map(literalText);
  const program = programName(command[0] ?? []);
  if (program !== undefined && CGROUP_TOOLS.has(program)) return true;
  const reads = program !== undefined && READERS.has(program);
  return command.some((word, i) => {
    const text = texts[i];
    const written = writtenByRedirect(word);
    if (text === undefined) return written && lineReachesControlGroups;
    const controlFile =
      inControlGroups(text) || (lineReachesControlGroups && CGROUP_CONTROL.test(basename(text)));
    return i > 0 && controlFile && (written || !reads);
  });
}

/**
 * Whether a command could stop the daemon: `pkill`, `killall`, `fuser -k`, `launchctl`,
 * `loginctl kill-…`/`terminate-…`, `systemctl` or `service` with a word that says latch (or a
 * pattern, or one only running tells), `systemctl --user` with a verb that is no question, D-Bus
 * calls to systemd's manager, and `kill` unless each of its targets is plainly not the daemon. A
 * mention counts wherever it stands (`xargs kill`, `sh -c 'pkill …'`): asking more is the safe
 * direction.
 */
export function stopsTheDaemon(command: SimpleCommand, daemonPid: number): boolean {
  const texts = command.map(literalText);
  const passes = new Map<string, boolean[]>();
  // Whether a word at `from` or after passes a test: each test runs once per word, from the end,
  // however many times its program is named (`kill kill kill …` stays one pass).
  const anyFrom = (from: number, test: string, passing: (i: number) => boolean) => {
    let found = passes.get(test);
    if (!found) {
      found = new Array<boolean>(command.length + 1).fill(false);
      for (let i = command.length - 1; i >= 0; i--) found[i] = found[i + 1]! || passing(i);
      passes.set(test, found);
    }
    return found[from]!;
  };
  return command.some((word, index) => {
    const name = programName(word);
    switch (name) {
      case 'kill': {
        // Under a program that puts its input in place of a word (`xargs -I{} kill {}`), a word
        // that is no pid may be replaced by the daemon's.
        const replaced = command.slice(0, index).some((before) => SUBSTITUTE.has(programName(before) ?? ''));
        return killMayReach(texts, index + 1, (from) =>
          anyFrom(from, replaced ? 'replaced target' : 'target', (i) =>
            mayBeTheDaemon(texts[i], command[i]!, daemonPid, replaced),
          ),
        );
      }
      case 'fuser':
        return anyFrom(
          index + 1,
          'kill option',
          (i) => texts[i] === '--kill' || /^-[a-z]*k/i.test(texts[i] ?? ''),
        );
      case 'systemctl': {
        // The user's own manager runs the daemon: a verb that is not a question to it may stop
        // it, or restart it in another environment (`set-environment NODE_OPTIONS=…`, `exit`).
        if (texts.slice(index + 1).some((text) => /^--u(s(er?)?)?$/.test(text ?? ''))) {
          return !QUESTIONS.has(systemctlVerb(texts.slice(index + 1)) ?? '');
        }
        return anyFrom(index + 1, 'may say latch', (i) => maySayLatch(texts[i]));
      }
      case 'service':
        return anyFrom(index + 1, 'may say latch', (i) => maySayLatch(texts[i]));
      case 'loginctl':
        return anyFrom(index + 1, 'ends a session', (i) => /^(kill|terminate)-/.test(texts[i] ?? 'kill-'));
      case 'busctl':
      case 'gdbus':
      case 'dbus-send':
        return callsTheServiceManager(texts, index, anyFrom);
      case 'launchctl':
      // Sets the environment of the user's service manager, which the daemon's next start gets.
      case 'dbus-update-activation-environment':
        return true;
      default:
        // Qt's caller, by any of its names (`qdbus6`, `qdbus-qt5`).
        if (name?.startsWith('qdbus')) return callsTheServiceManager(texts, index, anyFrom);
        if (name !== undefined && STALLS.has(name)) {
          // renice and schedtool take pids by default; the others after `-p`. By a program's
          // name (`cpulimit -e`), a user's, a group's (`renice -u me`, `ionice -P`): any process.
          const many = anyFrom(index + 1, 'many', (i) =>
            /^(-[ePug]|--(exe|path|user|pgrp))/.test(texts[i] ?? ''),
          );
          const byPid =
            (name === 'renice' ||
              name === 'schedtool' ||
              anyFrom(index + 1, 'pid option', (i) => /^(-[a-z]*p|--pid)/.test(texts[i] ?? '-p'))) &&
            anyFrom(index + 1, 'pid', (i) =>
              mayBeTheDaemon(
                /^(?:--pid=|-p)(\d+)$/.exec(texts[i] ?? '')?.[1] ?? texts[i],
                command[i]!,
                daemonPid,
                false,
              ),
            );
          return many || byPid;
        }
        return name !== undefined && BY_NAME.has(name);
    }
  });
}

const MOST_BUS_OPTIONS = 8;
/** busctl's and gdbus's options that take the next word as their value. */
const BUS_VALUED =
  /^(-[MHde]|--(machine|host|address|dest|destination|object-path|timeout|match|size|limit-messages))$/;
/** What `busctl` and `gdbus` only ask: their other verbs call. */
const BUS_QUESTIONS = new Set([
  'list',
  'status',
  'monitor',
  'capture',
  'tree',
  'introspect',
  'get-property',
  'help',
]);

/**
 * Whether a D-Bus caller's arguments may call systemd's manager (`busctl --user call
 * org.freedesktop.systemd1 … SetEnvironment`, then `RestartUnit`: the daemon restarted with the
 * agent's code in it), or the bus's own `UpdateActivationEnvironment`, which a bus may pass on to
 * systemd, as `dbus-update-activation-environment` does. A word only running tells may be either.
 * A question (`busctl introspect …`) only tells.
 */
function callsTheServiceManager(
  texts: readonly (string | undefined)[],
  at: number,
  anyFrom: (from: number, test: string, passing: (i: number) => boolean) => boolean,
): boolean {
  // The verb: the first word that is no option nor the value of one (`-M host`, `--address x`).
  // Past a few options, none is looked for (so each caller's look stays short): it may call.
  let verb = at + 1;
  for (let options = 0; options < MOST_BUS_OPTIONS && texts[verb]?.startsWith('-'); options++)
    verb += BUS_VALUED.test(texts[verb]!) ? 2 : 1;
  if (!texts[verb]?.startsWith('-') && BUS_QUESTIONS.has(texts[verb] ?? '')) return false;
  return anyFrom(at + 1, 'calls systemd', (i) => {
    const text = texts[i];
    return text === undefined || /systemd1|UpdateActivationEnvironment/i.test(text);
  });
}

/**
 * Programs that stall or starve a running process they are given by its pid: stopped and
 * continued in turn (`cpulimit -p`), made the first the kernel kills (`choom`), or given the
 * least CPU or disk (`renice`, `ionice`, `taskset`, `chrt`, `schedtool`): the daemon answers no
 * door in time.
 */
const STALLS = new Set(['cpulimit', 'choom', 'renice', 'ionice', 'taskset', 'chrt', 'schedtool']);

/** Programs that attach to a running process: to read its memory, run code in it, or limit it. */
const ATTACH = new Set([
  'gdb',
  'gdbserver',
  'gcore',
  'lldb',
  'strace',
  'ltrace',
  'perf',
  'prlimit',
  'pstack',
  'eu-stack',
]);

/**
 * Whether a command could attach to the daemon (a debugger, a tracer, `prlimit --pid`): inside
 * it, code runs with its keys, and its memory holds them. Any word after such a program that
 * may be the daemon's pid counts, as for `kill`; a program to start (`strace ls`) does not.
 */
export function attachesToTheDaemon(command: SimpleCommand, daemonPid: number): boolean {
  const texts = command.map(literalText);
  const at = command.findIndex((word) => ATTACH.has(programName(word) ?? ''));
  if (at < 0) return false;
  return command.slice(at + 1).some((word, i) => {
    const text = texts[at + 1 + i];
    // A word that is no pid, literal, names a program or an option here, not a process.
    if (text !== undefined && !/^\s*[+-]?\d+\s*$/.test(text)) return false;
    return mayBeTheDaemon(text, word, daemonPid, false);
  });
}

/**
 * `kill`'s targets, after its options from `start`. Plainly not the daemon: the shell itself or
 * its last job (`$$`, `$!`, `%1`), a pid other than the daemon's, or a word that is no pid at all
 * (kill refuses it: `docker kill web` names a container). Anything else may be it: the daemon's
 * pid, 0 or a negative number (process groups, every process), a computed target
 * (`$(pgrep latch)`), or no target in sight (`pgrep latch | xargs kill`). `kill -l` only lists.
 */
function killMayReach(
  texts: (string | undefined)[],
  start: number,
  targetFrom: (index: number) => boolean,
): boolean {
  let signalGiven = false;
  let i = start;
  for (; i < texts.length; i++) {
    const text = texts[i];
    if (text === undefined || !text.startsWith('-')) break;
    if (text === '--') {
      i++;
      break;
    }
    if (/^-(l|L|-list|-table)$/.test(text)) return false;
    // After the signal, -N is a process group: a target.
    if (signalGiven && /^-\d+$/.test(text)) return true;
    signalGiven = true;
    if (/^-(s|n|-signal)$/.test(text)) i++;
  }
  return i >= texts.length || targetFrom(i);
}

function mayBeTheDaemon(
  text: string | undefined,
  target: Word,
  daemonPid: number,
  replaced: boolean,
): boolean {
  if (text === undefined) {
    const only = target.length === 1 ? target[0] : undefined;
    return !(only && 'computed' in only && ['$$', '$!', '$BASHPID'].includes(only.computed));
  }
  // As kill reads a number: blanks around it and a sign allowed (`kill ' 42'`, `kill +42`), and,
  // for procps's kill, taken as a 32-bit pid (4294967296 + 42 is 42, 4294967295 is -1: all).
  const pid = /^\s*([+-]?\d+)\s*$/.exec(text)?.[1];
  if (pid === undefined) return replaced;
  const as32Bits = Number(BigInt.asIntN(32, BigInt(pid)));
  // A thread's id is the whole process to kill(2), ptrace and prlimit.
  return (
    pid.startsWith('-') ||
    as32Bits <= 0 ||
    as32Bits === daemonPid ||
    existsSync(`/proc/${daemonPid}/task/${as32Bits}`)
  );
}
