import { constants } from 'node:os';
import type { LatchConfig } from '../config/config.ts';
import { writeStderrLine } from '../output/stderrLine.ts';
import { watchDaemon } from '../socket/watchDaemon.ts';
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
const GRACE_MS = 5000;

/**
 * Runs a command the daemon allowed, under the fleet's kill switch, and exits with its code once
 * it ends. It follows the daemon's switch as long as the command runs, across daemon restarts: a
 * freeze stops (or ends) everything the command started, a resume continues it. However this
 * process ends — the command's exit, a signal, an error of its own — what the command started
 * ends with it, and its cgroup is removed.
 */
export function runUnderSwitch(
  argv: readonly string[],
  command: string,
  rules: LatchConfig['killSwitch'],
): void {
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

  let held = false;
  let ending: Promise<void> | undefined;
  let strictTimer: NodeJS.Timeout | undefined;
  const end = () => (ending ??= endCommandTree(tree, { held, graceMs: GRACE_MS }));

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
  };
  const resume = () => {
    if (!held || ending) return;
    held = false;
    say(`the fleet is not frozen; continuing ${command}`);
    tree.release();
  };
  const stopWatching = watchDaemon({
    onState: (state) =>
      state.frozen ? freeze(`the fleet is frozen (${state.reason ?? 'no reason given'})`) : resume(),
    onLost: (reason) => {
      // Like the daemon without its relay (strict = false): the last state holds while it is away.
      const meanwhile = held
        ? 'stays stopped until it is back'
        : rules.strict
          ? `runs on, for ${rules.graceSeconds} s at most (strict mode)`
          : 'runs on until it is back';
      say(`lost the daemon (${reason}); ${command} ${meanwhile}`);
      if (rules.strict)
        strictTimer = setTimeout(
          () => freeze(`the daemon has been out of reach for ${rules.graceSeconds} s (strict mode)`),
          rules.graceSeconds * 1000,
        );
    },
    onBack: () => {
      clearTimeout(strictTimer);
      say('the daemon is back');
    },
  });

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
}
