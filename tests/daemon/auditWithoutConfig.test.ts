import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { verifyAuditLog, auditAnchor } from '../../daemon/audit/verifyAuditLog.ts';
import { openState } from '../../daemon/state/openState.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';
import { initMachine, newMachine, type LatchMachine } from '../support/latchMachine.ts';

// While config.toml is broken by a typo (or missing), the audit keeps to the config approved
// last, as the rest of the daemon does, never to the defaults, which keep fewer rotated files
// and record agent text the approved config may leave out.

/**
 * A machine whose approved config rotates at 1 KiB, keeps 50 files (with no minimum age, so the
 * count alone decides) and records no agent text.
 */
async function strictAuditMachine(): Promise<LatchMachine> {
  const machine = newMachine();
  await initMachine(machine, { relay: 'http://127.0.0.1:9' });
  const text = readFileSync(machine.files.config, 'utf8')
    .replace(/^content = "full"$/m, 'content = "none"')
    .replace(/^rotate_bytes = .*$/m, 'rotate_bytes = 1024')
    .replace(/^keep_files = .*$/m, 'keep_files = 50')
    .replace(/^keep_hours = .*$/m, 'keep_hours = 0');
  writeFileSync(machine.files.config, text);
  // As if a phone had approved it (a loosening of rotate_bytes waits for one).
  const store = new StateStore(machine.files.state);
  store.setMeta('config_text', text);
  store.close();
  return machine;
}

/** The rotated files' last sequence numbers, in order. */
const rotatedFiles = (machine: LatchMachine) =>
  readdirSync(machine.home, { recursive: true, encoding: 'utf8' })
    .map((name) => /audit\.log\.(\d+)$/.exec(name)?.[1])
    .filter((seq) => seq !== undefined)
    .map(Number)
    .sort((a, b) => a - b);

describe('the audit log while the config is broken', () => {
  it('keeps to the approved rotation, retention and redaction', async () => {
    const machine = await strictAuditMachine();
    const state = openState(machine.files);
    onTestFinished(() => state.store.close());
    const append = (count: number) => {
      for (let index = 0; index < count; index++)
        state.audit.append({ event: 'blocked', reason: 'config_invalid', command: 'rm -rf /srv/data' });
    };
    append(400);
    const before = rotatedFiles(machine);
    expect(before).toHaveLength(50);

    writeFileSync(machine.files.config, '[relay\nurl = ', { flag: 'a' });
    expect(state.configKeeper.current().ok).toBe(false);
    append(400);
    const after = rotatedFiles(machine);
    expect(after).toHaveLength(50);
    expect(after[0]).toBeGreaterThan(before.at(-1)!);
    const everything = [machine.files.audit, ...after.map((seq) => `${machine.files.audit}.${seq}`)]
      .map((file) => readFileSync(file, 'utf8'))
      .join('');
    expect(everything).toContain('config_invalid');
    expect(everything).not.toContain('rm -rf');
    expect(verifyAuditLog(machine.files.audit, auditAnchor(state.store))).toMatchObject({ ok: true });
  });
});
