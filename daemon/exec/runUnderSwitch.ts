import { constants } from 'node:os';
import { writeStderrLine } from '../output/stderrLine.ts';
import { fleetFrozenText } from '../gate/deny.ts';
import { watchDaemon, type DaemonWatcher, type SwitchRules } from '../socket/watchDaemon.ts';
import { endCommandTree } from './endCommandTree.ts';
import { startCommand } from './startCommand.ts';

/** `latch exec`'s own exit codes (docs/daemon.md); otherwise it exits with the command's. */
export const EXEC_EXIT = {
  /** Latch failed after the command started; what the command started was ended. */
  failed: 125,
  /**
   * The command did not run: denied, or no answer. Not 126, which shells, env and timeout give
   * for "found but not executable": a script must not read a deny as a broken file. 77 is
   * sysexits' EX_NOPERM ("not permitted"), which no shell gives; a command that uses sysexits
   * means the same by it, and `latch: not running` on stderr tells the two apart.
   */
  denied: 77,
  /** The command could not be started (as a shell says for "not found"). */
  cannotRun: 127,
} as const;

/** How long what is left of a command has between SIGTERM and SIGKILL. */
export const GRACE_MS = 5000;

/**
 * How often a held command is held again: a process of the run, or one that left it, may thaw
 * the cgroup or continue a stopped process (both are this user's to do).
 */
export const HOLD_AGAIN_MS = 500;

/** What `latch exec` does around the start: its answer is given once the command starts, or never does. */
export interface StartDoors {
  /** The command started, under the switch. */
  started(): void;
  /** The command will not start: deny, and exit. */
  notStarted(reason: string): never;
}

/**
 * Runs a command the daemon allowed, under the fleet's kill switch, and exits with its code once
 * it ends. It starts only once the daemon's watch has said the switch's state and the rules in
 * force there (strict, grace, stop or terminate): never the config file as it reads now, which may
 * hold a loosening no phone approved. A fleet frozen since the allow, or a daemon gone before it
 * said, and the command does not start.
 */
export function runUnderSwitch(argv: readonly string[], command: string, doors: StartDoors): void {
  let obeying: DaemonWatcher | undefined;
  const stopWatching = watchDaemon({
    onState: (state) => {
      if (obeying) return obeying.onState(state);
      if (state.frozen) doors.notStarted(fleetFrozenText(state.reason));
      obeying = startObeying(argv, command, state.rules, () => stopWatching());
      doors.started();
    },
    onLost: (reason, busy) =>
      obeying
        ? obeying.onLost(reason, busy)
        : doors.notStarted(`lost the daemon before it started (${reason})`),
    onBack: () => obeying?.onBack(),
  });
}

/**
 * Starts the command and follows the switch as long as it runs, across daemon restarts: a freeze
 * stops (or ends) everything the command started, a resume continues it. However this process
 * ends — the command's exit, a signal, an error of its own — what the command started ends with
 * it, and its cgroup is removed.
 */
function startObeying(
  argv: readonly string[],
  command: string,
  firstRules: SwitchRules,
  stopWatching: () => void,
): DaemonWatcher {
  const say = (line: string) => writeStderrLine(`latch: ${line}`);
  let started: ReturnType<typeof startCommand>;
  try {
    started = startCommand(argv);
  } catch (error) {
    say(`cannot run ${argv[0]}: ${(error as Error).message}`);
    process.exit(EXEC_EXIT.cannotRun);
  }
  const { child, tree } = started;
  // Every way out passes here, a stray process.exit too; close() is synchronous and idempotent.
  process.on('exit', () => tree.close());
  const crash = (error: unknown) => {
    say(`internal error: ${error instanceof Error ? error.message : String(error)}; ending ${command}`);
    process.exit(EXEC_EXIT.failed);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);

  let rules = firstRules;
  let held = false;
  let holdingAgain: NodeJS.Timeout | undefined;
  let ending: Promise<void> | undefined;
  let strictTimer: NodeJS.Timeout | undefined;
  const end = () => {
    clearInterval(holdingAgain);
    return (ending ??= endCommandTree(tree, { held, graceMs: GRACE_MS }));
  };

  // `why` opens the line that says so: the fleet's freeze, or strict mode's.
  const freeze = (why: string) => {
    if (held || ending) return;
    if (rules.onFreeze === 'terminate') {
      say(`${why}; terminating ${command}`);
      void end();
      return;
    }
    held = true;
    say(`${why}; stopping ${command}`);
    tree.hold();
    holdingAgain = setInterval(() => tree.hold(), HOLD_AGAIN_MS);
  };
  const resume = () => {
    if (!held || ending) return;
    held = false;
    clearInterval(holdingAgain);
    say(`the fleet is not frozen; continuing ${command}`);
    tree.release();
  };
  const watcher: DaemonWatcher = {
    onState: (state) => {
      rules = state.rules;
      if (state.frozen) freeze(fleetFrozenText(state.reason));
      else resume();
    },
    onLost: (reason, busy) => {
      // Like the daemon without its relay (strict = false): the last state holds while it is away.
      // A busy daemon is not away: it runs, may be frozen, and cannot say so to this run, which
      // then gets strict mode's grace whatever the mode.
      const why = busy ? 'a busy daemon cannot tell it of a freeze' : 'strict mode';
      const meanwhile = held
        ? 'stays stopped until it is back'
        : rules.strict || busy
          ? `runs on, for ${rules.graceSeconds} s at most (${why})`
          : 'runs on until it is back';
      say(`lost the daemon (${reason}); ${command} ${meanwhile}`);
      if (rules.strict || busy) {
        clearTimeout(strictTimer);
        strictTimer = setTimeout(
          () => freeze(`the daemon has been out of reach for ${rules.graceSeconds} s (${why})`),
          rules.graceSeconds * 1000,
        );
      }
    },
    onBack: () => {
      clearTimeout(strictTimer);
      say('the daemon is back');
    },
  };

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (!held) return tree.signal(signal);
      say(`${signal} while frozen: killing ${command}`);
      void end();
    });
  }
  let finished = false;
  const finish = async (code: number) => {
    if (finished) return;
    finished = true;
    stopWatching();
    clearTimeout(strictTimer);
    // What the command left behind would be out of the switch's reach once we are gone.
    await end();
    process.exit(code);
  };
  child.on('error', (error) => {
    say(`cannot run ${argv[0]}: ${error.message}`);
    void finish(EXEC_EXIT.cannotRun);
  });
  child.on('exit', (code, signal) => void finish(code ?? 128 + constants.signals[signal!]));
  return watcher;
}
