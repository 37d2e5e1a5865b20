import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { hookInput, runLatch } from '../support/latchMachine.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

/**
 * Signals that any process of the same user may send, an agent's included. By default Node opens
 * its inspector on SIGUSR1 (code run through it could answer for a phone), and ends on SIGQUIT,
 * SIGUSR2 or SIGALRM without a word.
 */

const INSPECTOR = /Debugger listening|inspector/i;
/** Long enough for Node to open its inspector after SIGUSR1, which it does within milliseconds. */
const INSPECTOR_GRACE_MS = 1_500;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function pairedDaemon(): Promise<PairedDaemon> {
  const paired = await startPairedDaemon();
  stops.push(() => paired.stop());
  return paired;
}

describe('latch daemon sent SIGUSR1', () => {
  it('opens no inspector, and goes on answering', async () => {
    const paired = await pairedDaemon();
    const { child } = paired.daemon;
    child.kill('SIGUSR1');
    child.kill('SIGUSR1');
    await new Promise((resolve) => setTimeout(resolve, INSPECTOR_GRACE_MS));
    expect(paired.daemon.output()).not.toMatch(INSPECTOR);
    expect(child.exitCode).toBeNull();
    expect(child.signalCode).toBeNull();
    const status = await runLatch(paired.machine, ['status']);
    expect(status.code).toBe(0);
  });
});

describe('latch hook sent a signal while it waits for a phone', () => {
  for (const signal of ['SIGUSR1', 'SIGUSR2', 'SIGQUIT', 'SIGALRM'] as const) {
    it(`answers a deny (exit 2) for ${signal}, and opens no inspector`, async () => {
      const paired = await pairedDaemon();
      const hook = spawn(process.execPath, [LATCH_BIN, 'hook', 'claude-code'], {
        env: paired.machine.env,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      stops.push(async () => {
        hook.kill('SIGKILL');
      });
      let stdout = '';
      let stderr = '';
      hook.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      hook.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = once(hook, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      hook.stdin.end(hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' }));
      await paired.relay.waitFor(() => paired.relay.requests.length === 1, 30_000);

      hook.kill(signal);
      const [code, killedBy] = await exited;
      expect({ code, killedBy }).toEqual({ code: 2, killedBy: null });
      expect(stdout).toBe('');
      expect(stderr).toMatch(new RegExp(`^latch: stopped by ${signal} before an answer$`, 'm'));
      expect(stderr).not.toMatch(INSPECTOR);
    });
  }
});
