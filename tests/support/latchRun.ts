import { spawn } from 'node:child_process';
import type { LatchMachine } from './latchMachine.ts';
import { LATCH_BIN } from './latchCli.ts';

/** A running `latch` command: what it printed so far, and a keyboard when it has a terminal. */
export interface LatchRun {
  /** Its standard output, or under a terminal the screen, with `\n` line ends and no cursor moves. */
  stdout(): string;
  stderr(): string;
  /** Types a line on its terminal. */
  type(line: string): void;
  /** Waits until `read` finds what it looks for on the screen; throws with the screen if it exits first. */
  waitFor<T>(read: (screen: string) => T | undefined, what: string, timeoutMs?: number): Promise<T>;
  exited: Promise<number | null>;
  /** Sends its process group SIGINT, as Ctrl-C at its terminal does. */
  interrupt(): void;
  /** Ends it, and whatever it started, if it still runs. */
  kill(): void;
}

const CURSOR_MOVES = /\x1b\[[0-9;]*[A-Za-z]/g;
const PAIRING_LINK = /^(http\S+\/pair#\S+)$/m;

/** The pairing link `latch pair` printed, if it has yet. */
export const pairingLinkOn = (screen: string) => PAIRING_LINK.exec(screen)?.[1];

/**
 * Starts `latch …args` for `machine`. Without `terminal` it runs in a session of its own, with no
 * controlling terminal, as an agent, a script or `npm start` runs it. With `terminal` it runs
 * under a pseudo-terminal of its own (util-linux `script`), where a person reads the screen and
 * types on /dev/tty. Either way it never reaches the terminal the tests were started from.
 */
export function startLatch(
  machine: LatchMachine,
  args: string[],
  options: { terminal?: boolean } = {},
): LatchRun {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, LATCH_BIN, ...args];
  const child = options.terminal
    ? spawn(
        'script',
        ['--quiet', '--flush', '--return', '--command', command.map(quote).join(' '), '/dev/null'],
        { env: machine.env, detached: true },
      )
    : spawn(command[0]!, command.slice(1), { env: machine.env, detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const screen = () => stdout.replace(CURSOR_MOVES, '').replaceAll('\r\n', '\n');
  const signalGroup = (signal: NodeJS.Signals) => {
    // Its own process group: `script` and the latch under it go together.
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Gone already.
    }
  };
  return {
    stdout: screen,
    stderr: () => stderr,
    type: (line) => child.stdin.write(`${line}\n`),
    async waitFor(read, what, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ended = child.exitCode !== null || child.signalCode !== null;
        // Once it ended, what it printed last is read in full first.
        if (ended) await exited;
        const found = read(screen());
        if (found !== undefined) return found;
        if (ended || Date.now() > deadline)
          throw new Error(`latch ${args[0]} did not show ${what}:\n${screen()}\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    exited,
    interrupt: () => signalGroup('SIGINT'),
    kill: () => signalGroup('SIGKILL'),
  };
}
