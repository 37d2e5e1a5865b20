import { spawn } from 'node:child_process';
import type { LatchMachine } from './latchMachine.ts';
import { LATCH_BIN } from './latchCli.ts';

/** A running `latch pair`: what it printed so far, and a keyboard when it has a terminal. */
export interface LatchPairRun {
  /** Its standard output, or under a terminal the screen, with `\n` line ends and no cursor moves. */
  stdout(): string;
  stderr(): string;
  /** Types a line on its terminal. */
  type(line: string): void;
  /** Waits until `pattern` shows on the screen; throws with the screen if it exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
  kill(): void;
}

const CURSOR_MOVES = /\x1b\[[0-9;]*[A-Za-z]/g;

/**
 * Starts `latch pair` for `machine`. Without `terminal` it runs in a session of its own, with no
 * controlling terminal (as an agent, a script or `npm start` runs it): a first phone is trusted on
 * the QR code alone. With `terminal` it runs under a pseudo-terminal of its own (util-linux
 * `script`), where a person types the phone's code. Either way it never reaches the terminal
 * the tests were started from.
 */
export function startLatchPair(machine: LatchMachine, options: { terminal?: boolean } = {}): LatchPairRun {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const child = options.terminal
    ? spawn(
        'script',
        [
          '--quiet',
          '--flush',
          '--return',
          '--command',
          [process.execPath, LATCH_BIN, 'pair'].map(quote).join(' '),
          '/dev/null',
        ],
        { env: machine.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] },
      )
    : spawn(process.execPath, [LATCH_BIN, 'pair'], {
        env: machine.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const screen = () => stdout.replace(CURSOR_MOVES, '').replaceAll('\r\n', '\n');
  return {
    stdout: screen,
    stderr: () => stderr,
    type: (line) => child.stdin.write(`${line}\n`),
    async waitFor(pattern, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = pattern.exec(screen());
        if (found) return found;
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`latch pair did not show ${pattern}:\n${screen()}\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    exited,
    kill() {
      // Its own process group: `script` and the latch pair under it go together.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Gone already.
      }
    },
  };
}
