import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { expect, it, onTestFinished } from 'vitest';
import { AuditLog } from '../../daemon/audit/auditLog.ts';
import { auditAnchor, verifyAuditLog } from '../../daemon/audit/verifyAuditLog.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';

// In-process on this side, so that mutation testing reaches the append's locking: the write
// lock must be taken before the last line is read, or a line the other process commits in
// between is chained over (SQLite then refuses the late write: SQLITE_BUSY_SNAPSHOT).

const APPENDER = fileURLToPath(new URL('./fixtures/appendAudit.ts', import.meta.url));
const LINES = 150;
const ROTATE_BYTES = 4096;

it('keeps one unbroken chain while the daemon and the CLI append at the same time, across rotations', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'latch-audit-two-'));
  const statePath = join(directory, 'state.db');
  const auditPath = join(directory, 'audit.log');
  const store = new StateStore(statePath);
  onTestFinished(() => store.close());
  const log = new AuditLog(auditPath, store, {
    redactContent: false,
    rotation: () => ({ rotateBytes: ROTATE_BYTES, keepFiles: 100 }),
  });

  const cli = spawn(
    process.execPath,
    ['--import', 'tsx', APPENDER, statePath, auditPath, `${LINES}`, `${ROTATE_BYTES}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  onTestFinished(() => void cli.kill('SIGKILL'));
  let cliErrors = '';
  cli.stderr.on('data', (chunk: Buffer) => (cliErrors += chunk.toString()));
  const cliExit = new Promise<number | null>((resolve) => cli.on('exit', resolve));
  await new Promise((resolve) => cli.stdout.once('data', resolve));

  // Each append is synchronous: yield between them, so the CLI's appends land among these.
  for (let index = 1; index <= LINES; index++) {
    log.append({ event: 'decision', request: `daemon-${index}` });
    await turn();
  }

  expect({ exit: await cliExit, errors: cliErrors }).toEqual({ exit: 0, errors: '' });
  const verdict = verifyAuditLog(auditPath, auditAnchor(store));
  expect(verdict).toMatchObject({ ok: true, lines: 2 * LINES, firstSeq: 1 });
  expect(verdict.ok && verdict.files.length).toBeGreaterThan(2);
});
