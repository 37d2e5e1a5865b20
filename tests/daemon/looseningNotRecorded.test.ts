import { mkdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { askHook, hookInput, initMachine, newMachine, startDaemonForTest } from '../support/latchMachine.ts';

const read = hookInput('PreToolUse', 'Bash', { command: 'ls /tmp' });

describe('a loosened config the daemon cannot record (review of faults)', () => {
  it('denies with the reason and keeps serving, where an unrecorded ask stopped the daemon; asks again once it can record', async () => {
    const machine = newMachine();
    // Push fatigue as `latch init` sets it, which the test loosens.
    await initMachine(machine, { relay: 'http://127.0.0.1:9', pushFatigue: true });
    const daemon = await startDaemonForTest(machine);
    expect((await askHook(machine, read)).permissionDecision).toBe('allow');

    // The audit log cannot be written (a folder in its place: EISDIR), and config.toml loosens.
    const aside = `${machine.files.audit}.aside`;
    renameSync(machine.files.audit, aside);
    mkdirSync(machine.files.audit);
    const config = readFileSync(machine.files.config, 'utf8');
    writeFileSync(machine.files.config, config.replace('burst_approvals = 5', 'burst_approvals = 1000'));
    const notRecorded = () =>
      daemon.output().match(/the config loosening could not be recorded: .*EISDIR/g) ?? [];
    for (let call = 1; call <= 3; call++) {
      expect(await askHook(machine, read)).toMatchObject({
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(/^latch: not_recorded: .*EISDIR/),
      });
      // Each call asks for the loosening again, the one before having failed: none is lost.
      await expect.poll(() => notRecorded().length).toBe(call);
    }
    expect(daemon.child.exitCode).toBeNull();

    rmdirSync(machine.files.audit);
    renameSync(aside, machine.files.audit);
    expect((await askHook(machine, read)).permissionDecision).toBe('allow');
    expect(daemon.child.exitCode).toBeNull();
  });
});
