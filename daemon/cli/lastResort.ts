/**
 * A door's promise that its process never ends without an explicit answer. An agent runs the
 * tool when its hook exits 0 with no output, exits 1 on a crash, or is killed at its timeout;
 * a script reads exit 0 as "approved". So whatever happens — an exception, a promise that never
 * settles while the event loop drains, a signal, the deadline — the door's own deny is given.
 */
export interface LastResort {
  /** The door gave its answer: from here the guard stands down. */
  answered(): void;
}

export interface LastResortOptions {
  /** Writes the deny, synchronously (it may run inside an 'exit' handler). */
  deny(reason: string): void;
  /** The exit code that goes with that deny. */
  exitCode: number;
  /** Answer deny on its own this many ms from now (before the caller's own deadline). */
  deadlineMs?: number;
}

export function guardWithLastResort(options: LastResortOptions): LastResort {
  let done = false;
  const denyAndExit = (reason: string): void => {
    if (done) return;
    done = true;
    options.deny(reason);
    process.exit(options.exitCode);
  };
  const timer =
    options.deadlineMs === undefined
      ? undefined
      : setTimeout(
          () => denyAndExit('no answer before the deadline; denied rather than left to the agent'),
          options.deadlineMs,
        );
  const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));
  const listeners = new Map<string, (value: unknown) => void>([
    ['uncaughtException', (error) => denyAndExit(`internal error: ${errorMessage(error)}`)],
    ['unhandledRejection', (error) => denyAndExit(`internal error: ${errorMessage(error)}`)],
    // The event loop drained with the answer still owed: a promise nobody will ever settle.
    ['beforeExit', () => denyAndExit('the conversation with the daemon ended without an answer')],
    // Each signal whose default would end the process without a word (SIGKILL cannot be caught:
    // the failsafe of the agent's hook command answers that one, hookCommand.ts).
    ...['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGALRM', 'SIGVTALRM'].map(
      (signal) => [signal, () => denyAndExit(`stopped by ${signal} before an answer`)] as const,
    ),
    // Anything else that ends the process (a stray process.exit) ends it with the deny's code.
    [
      'exit',
      () => {
        if (done) return;
        done = true;
        options.deny('exited without an answer');
        process.exitCode = options.exitCode;
      },
    ],
  ]);
  for (const [event, listener] of listeners) process.on(event, listener);
  return {
    answered: () => {
      done = true;
      clearTimeout(timer);
      // The door's own handlers (a child's signals, say) take over from here.
      for (const [event, listener] of listeners) process.off(event, listener);
    },
  };
}
