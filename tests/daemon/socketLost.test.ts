import { once } from 'node:events';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { initMachine, newMachine, runLatch, startDaemonForTest } from '../support/latchMachine.ts';

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

  it('leaves a daemon started since its socket and its place: it stops with 0, and the other serves on', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const first = await startDaemonForTest(machine);
    // Held still until the second listens: it then finds the socket another daemon's, not gone.
    first.child.kill('SIGSTOP');
    let second;
    try {
      rmSync(machine.socket);
      second = await startDaemonForTest(machine);
    } finally {
      first.child.kill('SIGCONT');
    }
    const [code] = (await once(first.child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(first.output()).toContain(`its socket ${machine.socket} was taken by another daemon`);
    expect(existsSync(machine.socket)).toBe(true);
    expect((await runLatch(machine, ['status'])).code).toBe(0);
    expect(second.child.exitCode).toBeNull();
  });
});
