import { once } from 'node:events';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  auditLines,
  initMachine,
  newMachine,
  runLatch,
  startDaemonForTest,
} from '../support/latchMachine.ts';

// Found by a review of faults: a daemon whose socket file was removed ran on, reachable by no
// caller; one started beside it was then left without a socket when the first one stopped.
describe('a daemon whose socket file is removed while it runs', () => {
  it('stops with the reason (exit 1, so that a service manager starts it again and makes the socket anew)', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const daemon = await startDaemonForTest(machine);
    rmSync(machine.socket);
    const [code] = (await once(daemon.child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(daemon.output()).toContain(
      `its socket ${machine.socket} is gone: no caller can reach this daemon, so it stops`,
    );
  });

  it('stops the same way when its socket’s folder becomes a file, where looking at the socket threw', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const daemon = await startDaemonForTest(machine);
    const folder = dirname(machine.socket);
    renameSync(folder, `${folder}-aside`);
    writeFileSync(folder, 'not a folder');
    const [code] = (await once(daemon.child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(daemon.output()).toContain(
      `its socket ${machine.socket} is gone: no caller can reach this daemon, so it stops`,
    );
    expect(daemon.output()).not.toMatch(/ENOTDIR|at .*\.c?js:\d+/);
  });

  it('is not replaced by a daemon started meanwhile: that one refuses, naming it; the first stops with 1', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const first = await startDaemonForTest(machine);
    // Held still, it cannot stop before the second has tried.
    first.child.kill('SIGSTOP');
    let second;
    try {
      rmSync(machine.socket);
      second = await runLatch(machine, ['daemon'], { timeoutMs: 20_000 });
    } finally {
      first.child.kill('SIGCONT');
    }
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `another daemon (pid ${first.child.pid}) runs on ${machine.socket} but has lost its socket`,
    );
    const [code] = (await once(first.child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(first.output()).toContain(`its socket ${machine.socket} is gone`);
    // Now it can start.
    await startDaemonForTest(machine);
  });

  // Found by review ka: a daemon whose socket another listener took stopped with 0, which a
  // service manager (Restart=on-failure) does not restart, and left that listener its callers.
  it('stops with 1 when another process listens in its socket’s place, says so, and writes socket_lost to its audit log', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const daemon = await startDaemonForTest(machine);
    const intruder = createServer((connection) => connection.destroy());
    onTestFinished(() => new Promise<void>((resolve) => intruder.close(() => resolve())));
    daemon.child.kill('SIGSTOP');
    try {
      rmSync(machine.socket);
      await new Promise<void>((resolve) => intruder.listen(machine.socket, resolve));
    } finally {
      daemon.child.kill('SIGCONT');
    }
    const [code] = (await once(daemon.child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(daemon.output()).toContain(
      `its socket ${machine.socket} was replaced by another process: no caller can reach this daemon, so it stops (exit 1)`,
    );
    expect(auditLines(machine).filter(({ event }) => event === 'socket_lost')).toEqual([
      expect.objectContaining({
        socket: machine.socket,
        why: `its socket ${machine.socket} was replaced by another process`,
      }),
    ]);
    // It left the other's socket where it was.
    expect(existsSync(machine.socket)).toBe(true);
  });
});
