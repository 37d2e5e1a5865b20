import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  auditLines,
  askHook,
  hookInput,
  initMachine,
  newMachine,
  runLatch,
  startDaemonForTest,
  withStore,
  type LatchMachine,
} from '../support/latchMachine.ts';

/** Mounting a small disk needs root on Linux; elsewhere this file says why it did not run. */
const canMount = process.platform === 'linux' && process.getuid?.() === 0;

const read = hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' });

/** Latch's home on a tmpfs of its own, so that filling it fills nothing else; unmounted at the end. */
function mountSmallHome(machine: LatchMachine): () => void {
  mkdirSync(machine.home, { recursive: true, mode: 0o700 });
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', machine.home]);
  if (mounted.status !== 0) throw new Error(`mount failed: ${mounted.stderr.toString()}`);
  return () => {
    const unmounted = spawnSync('umount', [machine.home]);
    if (unmounted.status !== 0) spawnSync('umount', ['-l', machine.home]);
  };
}

/** Fills the disk to its last byte with one file, and returns its path (removing it frees the space). */
function fillDisk(folder: string): string {
  const filler = join(folder, 'filler');
  const fd = openSync(filler, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (let free = statfsSync(folder).bavail; ;) {
      try {
        writeSync(fd, block.subarray(0, free > 16 ? block.length : 1));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return filler;
        throw error;
      }
      free = statfsSync(folder).bavail;
    }
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(!canMount)('a full disk under the daemon’s state (ENOSPC)', () => {
  it('denies with the reason, keeps answering, and loses nothing once there is space again', async () => {
    const machine = newMachine();
    const unmount = mountSmallHome(machine);
    try {
      await initMachine(machine, { relay: 'http://127.0.0.1:9' });
      const daemon = await startDaemonForTest(machine);
      expect((await askHook(machine, read)).permissionDecision).toBe('allow');
      const usedToken = 'token-used-before-the-disk-filled';
      expect(withStore(machine, (store) => store.consume(usedToken, Date.now() + 300_000))).toBe(true);

      const linesBeforeFull = auditLines(machine).length;
      const filler = fillDisk(machine.home);
      for (let call = 0; call < 3; call++)
        expect(await askHook(machine, read)).toEqual({
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: expect.stringMatching(
            /^latch: not_recorded: the daemon could not record this call: .*(ENOSPC|disk is full)/,
          ),
        });
      // Still running and answering: no crash, nothing for a service manager to restart.
      expect(daemon.child.exitCode).toBeNull();
      expect((await runLatch(machine, ['status'])).code).toBe(0);

      rmSync(filler);
      expect((await askHook(machine, read)).permissionDecision).toBe('allow');
      await daemon.stop();
      // Nothing lost: the chain verifies (no half-written line), the database is whole, and a
      // token used before the disk filled is still used.
      expect(await runLatch(machine, ['audit', 'verify'])).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(/^ok: .*the chain is intact/),
      });
      expect(auditLines(machine)).toHaveLength(linesBeforeFull + 1);
      withStore(machine, (store) => {
        expect(store.db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
        expect(store.consume(usedToken, Date.now() + 300_000)).toBe(false);
      });
    } finally {
      unmount();
    }
  });
});
