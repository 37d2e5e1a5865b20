import { readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DAEMON_REFUSED_EXIT } from '../../daemon/cli/exitCodes.ts';
import { SqliteDatabase } from '../../daemon/state/sqlite.ts';
import {
  claudeCodeDecision,
  claudeCodeReads,
  hookInput,
  initMachine,
  type LatchMachine,
  newMachine,
  runLatch,
  startDaemon,
  startDaemonForTest,
} from '../support/latchMachine.ts';

const read = hookInput('PreToolUse', 'Read', { file_path: '/home/dev/project/README.md' });
const START_OVER = 'to start over, pairing your phones again: latch init --reset';

async function setUp(): Promise<LatchMachine> {
  const machine = newMachine();
  await initMachine(machine, { relay: 'http://127.0.0.1:9' });
  return machine;
}

/** `latch daemon` as a service manager runs it: it must end at once, with one clear line. */
async function expectRefusal(machine: LatchMachine, stderr: string): Promise<void> {
  const refused = await runLatch(machine, ['daemon'], { timeoutMs: 10_000 });
  expect(refused).toMatchObject({ code: DAEMON_REFUSED_EXIT, stdout: '', stderr: `latch: ${stderr}\n` });
  // Meanwhile every gated call is denied, even one the policy allows.
  const hook = await runLatch(machine, ['hook', 'claude-code'], { input: read });
  expect(claudeCodeReads(hook, read)).toEqual({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: `latch: daemon_unreachable: the daemon is not running (no socket at ${machine.socket}); start it with latch daemon`,
    },
  });
}

const damaged = (machine: LatchMachine, what: string) =>
  `${machine.files.state} is damaged (${what}): Latch will not guess what you approved; restore it (with its -wal file, if any) from a backup, or ${START_OVER}`;

describe('a corrupt or truncated state.db', () => {
  it('cut to half its size: refused as malformed, and init --reset starts over', async () => {
    const machine = await setUp();
    truncateSync(machine.files.state, Math.floor(statSync(machine.files.state).size / 2));
    await expectRefusal(machine, damaged(machine, 'database disk image is malformed'));

    expect((await runLatch(machine, ['init', '--reset'])).code).toBe(0);
    await startDaemonForTest(machine);
    const hook = await runLatch(machine, ['hook', 'claude-code'], { input: read });
    expect(claudeCodeDecision(hook, read)).toBe('allow');
  });

  it('init --reset is refused while the daemon runs on the state, which stays as it was', async () => {
    // The daemon would go on writing the copy put aside, unguarded until its next start (review rv1).
    const machine = await setUp();
    const daemon = await startDaemonForTest(machine);
    const before = readFileSync(machine.files.state);
    const refused = await runLatch(machine, ['init', '--reset']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the daemon still runs on this state');
    expect(readFileSync(machine.files.state).equals(before)).toBe(true);
    expect(readdirSync(machine.home).filter((name) => name.includes('.replaced-'))).toEqual([]);

    await daemon.stop();
    expect((await runLatch(machine, ['init', '--reset'])).code).toBe(0);
  });

  it('with a garbage header: refused as not a database', async () => {
    const machine = await setUp();
    const bytes = readFileSync(machine.files.state);
    bytes.fill(0x5a, 0, 100); // the 100-byte header, "SQLite format 3" and the page size
    writeFileSync(machine.files.state, bytes);
    await expectRefusal(machine, damaged(machine, 'file is not a database'));
  });

  it('as a zero-byte file: refused as empty, not taken for a new database', async () => {
    const machine = await setUp();
    writeFileSync(machine.files.state, '');
    await expectRefusal(machine, damaged(machine, 'it is empty'));
    // Left as it was found: an empty file made into a fresh database would vouch for nothing.
    expect(statSync(machine.files.state).size).toBe(0);
  });

  for (const [name, damage] of [
    ['garbage', (wal: string) => writeFileSync(wal, Buffer.alloc(statSync(wal).size, 0x5a))],
    ['truncated to its header', (wal: string) => truncateSync(wal, 32)],
  ] as const) {
    it(`with its -wal ${name} after a crash: refused, since the database lost what the audit log holds`, async () => {
      const machine = await setUp();
      const daemon = await startDaemon(machine);
      // Each allowed call is an audit line the database records in its write-ahead log.
      for (let call = 0; call < 3; call++) await runLatch(machine, ['hook', 'claude-code'], { input: read });
      daemon.child.kill('SIGKILL'); // no checkpoint: the last writes are only in state.db-wal
      await new Promise((resolve) => daemon.child.once('exit', resolve));
      const wal = `${machine.files.state}-wal`;
      expect(statSync(wal).size).toBeGreaterThan(32);
      damage(wal);
      const refused = await runLatch(machine, ['daemon'], { timeoutMs: 10_000 });
      expect(refused.code).toBe(DAEMON_REFUSED_EXIT);
      expect(refused.stderr).toMatch(
        /^latch: \S+state\.db does not match \S+audit\.log \(the audit log ends at line \d+, the state database last recorded line \d+: lines were added to the log, or the state database lost its latest writes \(its -wal file removed while the daemon ran, or an older copy put back\)\)/,
      );
    });
  }

  it('is named in the systemd unit of docs/daemon.md, which does not restart on it', () => {
    const unit = readFileSync(new URL('../../docs/daemon.md', import.meta.url), 'utf8');
    expect(unit).toMatch(
      new RegExp(`^Restart=on-failure\\nRestartPreventExitStatus=${DAEMON_REFUSED_EXIT}$`, 'm'),
    );
  });
});

describe('a state.db another process holds locked (review of faults)', () => {
  it('is named at start, exit 1 (a service manager tries again), and starts once it is free', async () => {
    const machine = await setUp();
    const holder = new SqliteDatabase(machine.files.state);
    holder.exec('BEGIN IMMEDIATE');
    try {
      expect(await runLatch(machine, ['daemon'], { timeoutMs: 20_000 })).toMatchObject({
        code: 1,
        stderr: `latch: ${machine.files.state} is locked by another process (a sqlite3 shell, a backup): close it, and the daemon starts\n`,
      });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    await startDaemonForTest(machine);
    const hook = await runLatch(machine, ['hook', 'claude-code'], { input: read });
    expect(claudeCodeDecision(hook, read)).toBe('allow');
  });
});
