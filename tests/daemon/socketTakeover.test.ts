import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LATCH_BIN } from '../support/latchCli.ts';
import {
  hookInput,
  initMachine,
  newMachine,
  runLatch,
  startDaemonForTest,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';

// Found by review ka: a daemon started with another home but the same XDG_RUNTIME_DIR read a
// busy daemon's socket (a full backlog: EAGAIN) as dead, removed it and listened in its place,
// serving its own home's policy (`default = "allow"`) to the real installation's hooks; the real
// daemon then found its socket "taken by another daemon" and stopped with 0, which a service
// manager does not restart.

/** The real installation (asks a phone: none is paired, so a risky call is denied) and another home beside it. */
async function twoHomesOneRuntime(): Promise<{ real: LatchMachine; other: LatchMachine }> {
  const real = newMachine();
  await initMachine(real, { relay: 'http://127.0.0.1:9', policy: 'default = "ask"\n' });
  const own = newMachine();
  const other = {
    ...own,
    runtime: real.runtime,
    socket: real.socket,
    env: { ...own.env, XDG_RUNTIME_DIR: real.runtime },
  };
  await initMachine(other, { relay: 'http://127.0.0.1:9', policy: 'default = "allow"\n' });
  return { real, other };
}

/**
 * Opens connections to `path` until the kernel refuses one (a full backlog): how it refused, and
 * what closes the ones held (called when the test ends at the latest).
 */
async function fillBacklog(path: string): Promise<{ refused: string | undefined; release: () => void }> {
  const held: Socket[] = [];
  const release = () => {
    for (const socket of held.splice(0)) socket.destroy();
  };
  onTestFinished(release);
  for (let i = 0; i < 5000; i++) {
    const socket = connect(path);
    const refused = await new Promise<string | undefined>((resolve) => {
      socket.once('connect', () => resolve(undefined));
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    if (refused) return { refused, release };
    socket.on('error', () => {});
    held.push(socket);
  }
  return { refused: undefined, release };
}

/** Holds the daemon still (SIGSTOP): let go again, at the latest before it is stopped when the test ends. */
function holdStill(daemon: RunningDaemon): () => void {
  daemon.child.kill('SIGSTOP');
  const letGo = () => void daemon.child.kill('SIGCONT');
  // A stopped daemon would not act on the SIGTERM that stops it, whatever order the test's ends run in.
  const stop = daemon.stop;
  daemon.stop = async () => {
    letGo();
    await stop();
  };
  return letGo;
}

/** `latch daemon` for `machine`, which is expected to refuse: its exit code and output (killed at 20 s). */
async function daemonRefusal(
  machine: LatchMachine,
): Promise<{ code: number | null | 'still running'; output: string }> {
  const child = spawn(process.execPath, [LATCH_BIN, 'daemon'], {
    env: machine.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await exited;
  });
  const code = await Promise.race([
    exited,
    new Promise<'still running'>((r) => setTimeout(() => r('still running'), 20_000)),
  ]);
  return { code, output };
}

const risky = () => hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' });

async function expectOwnPolicy(real: LatchMachine): Promise<void> {
  const hook = await runLatch(real, ['hook', 'claude-code'], { input: risky(), timeoutMs: 60_000 });
  expect(hook.code).toBe(2);
  expect(hook.stderr).toContain('no phone is paired');
}

describe('a second daemon never takes a live daemon’s socket', () => {
  it('refuses while the daemon its pid file names is held still with a full backlog; the first, let go, answers with its own policy', async () => {
    const { real, other } = await twoHomesOneRuntime();
    const first = await startDaemonForTest(real);
    await expectOwnPolicy(real);

    const letGo = holdStill(first);
    const backlog = await fillBacklog(real.socket);
    expect(backlog.refused).toBe('EAGAIN');
    const second = await daemonRefusal(other);
    expect(second.code).toBe(1);
    expect(second.output).toContain(
      `another daemon (pid ${first.child.pid}) runs on ${real.socket} but does not take connections now (EAGAIN`,
    );
    expect(second.output).not.toMatch(/removed a dead socket file|listening on/);

    backlog.release();
    letGo();
    // Past the first daemon's check of its socket (every 2 s): it is still its own.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(first.child.exitCode).toBeNull();
    await expectOwnPolicy(real);
    expect((await runLatch(real, ['status'])).code).toBe(0);
  });

  it('refuses on a socket that does not take connections (EAGAIN) even with no pid file to go by, and leaves it in place', async () => {
    const { real, other } = await twoHomesOneRuntime();
    const first = await startDaemonForTest(real);
    // As a daemon of a version before the pid file left it, or one whose pid file was removed.
    rmSync(join(real.runtime, 'latch', 'daemon.pid'), { force: true });
    const letGo = holdStill(first);
    const backlog = await fillBacklog(real.socket);
    expect(backlog.refused).toBe('EAGAIN');
    const second = await daemonRefusal(other);
    expect(second.code).toBe(1);
    expect(second.output).toContain(
      `a daemon may run on ${real.socket} but does not take connections (EAGAIN: busy, or stopped), so its socket is left in place`,
    );

    backlog.release();
    letGo();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(first.child.exitCode).toBeNull();
    await expectOwnPolicy(real);
  });

  it('starts where the daemon its pid file names is gone (killed), removing its socket file', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const first = await startDaemonForTest(machine);
    first.child.kill('SIGKILL'); // leaves its socket file and its pid file behind
    await once(first.child, 'exit');
    const second = await startDaemonForTest(machine);
    expect(second.output()).toContain(`removed a dead socket file at ${machine.socket}`);
    expect((await runLatch(machine, ['status'])).code).toBe(0);
  });
});
