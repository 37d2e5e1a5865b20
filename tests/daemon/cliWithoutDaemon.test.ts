import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AuditVerifyJson } from '../../daemon/cli/commands/audit.ts';
import type { DevicesJson } from '../../daemon/cli/commands/devices.ts';
import type { DoctorJson } from '../../daemon/cli/commands/doctor.ts';
import { EXEC_DENIED } from '../../daemon/cli/commands/exec.ts';
import type { RequestJson } from '../../daemon/cli/commands/request.ts';
import { ISO_TIME, json } from '../support/cliOutput.ts';
import { initMachine, newMachine, pairPhoneDirectly, runLatch } from '../support/latchMachine.ts';

describe('latch without a daemon', () => {
  it('latch request exits 3 when Latch cannot decide, and --json says unavailable', async () => {
    const machine = newMachine();
    const text = await runLatch(machine, ['request', '--title', 'ship it']);
    expect(text).toMatchObject({
      code: 3,
      stdout: expect.stringMatching(/^unavailable: daemon_unreachable: /),
    });
    const ran = await runLatch(machine, ['request', '--title', 'ship it', '--json']);
    expect(ran.code).toBe(3);
    expect(json<RequestJson>(ran)).toEqual({
      decision: 'unavailable',
      blockReason: 'daemon_unreachable',
      reason: expect.stringMatching(/^daemon_unreachable: /),
      requestId: null,
    });
  });

  it(`latch exec exits ${EXEC_DENIED}, not 126, when Latch is not set up`, async () => {
    const ran = await runLatch(newMachine(), ['exec', '--', 'true']);
    expect(ran.code).toBe(EXEC_DENIED);
    expect(ran.stderr).toMatch(/^latch: not running true: daemon_unreachable: /m);
  });

  it('latch devices --revoke --json answers with the list, the phone revoked', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const { device } = await pairPhoneDirectly(machine, 'http://127.0.0.1:9');
    const ran = await runLatch(machine, ['devices', '--revoke', device.id, '--json']);
    expect(ran.code).toBe(0);
    expect(json<DevicesJson>(ran).devices).toEqual([
      { id: device.id, name: 'Test phone', pairedAt: expect.stringMatching(ISO_TIME), revoked: true },
    ]);
    const unknown = await runLatch(machine, ['devices', '--revoke', 'no-such-phone', '--json']);
    expect(unknown).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'latch: no paired phone has the id no-such-phone\n',
    });
  });

  it('latch devices --revoke "" is refused, not read as a listing that exits 0 with the phone kept', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const { device } = await pairPhoneDirectly(machine, 'http://127.0.0.1:9');
    expect(await runLatch(machine, ['devices', '--revoke', ''])).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'latch: --revoke names no phone: give its id (latch devices lists them)\n',
    });
    const listed = await runLatch(machine, ['devices', '--json']);
    expect(json<DevicesJson>(listed).devices).toMatchObject([{ id: device.id, revoked: false }]);
  });

  it('latch audit verify --json names the file and line of the first break, exit 1', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const lines = readFileSync(machine.files.audit, 'utf8').split('\n').filter(Boolean);
    lines[0] = lines[0]!.replace(/"event":"\w+"/, '"event":"edited"');
    writeFileSync(machine.files.audit, `${lines.join('\n')}\n`);
    const ran = await runLatch(machine, ['audit', 'verify', '--json']);
    expect(ran.code).toBe(1);
    // The line after the edited one no longer carries its hash.
    expect(json<AuditVerifyJson>(ran)).toEqual({
      ok: false,
      file: 'audit.log',
      line: 2,
      problem: expect.stringMatching(/^does not carry the hash of the line before it/),
    });
  });

  it('latch doctor on a fresh home says to run latch init, never ENOENT', async () => {
    const machine = newMachine();
    const text = await runLatch(machine, ['doctor']);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(
      /^✗ config: Latch is not set up here: no \S+config\.toml\n {2}fix: run latch init$/m,
    );
    expect(text.stdout).toMatch(/^✗ policy: no policy at \S+policy\.toml\n {2}fix: run latch init$/m);
    expect(`${text.stdout}${text.stderr}`).not.toMatch(/ENOENT/);
    // Nothing was created by looking.
    expect(existsSync(machine.home)).toBe(false);

    const ran = await runLatch(machine, ['doctor', '--json']);
    expect(ran.code).toBe(1);
    const report = json<DoctorJson>(ran);
    expect(report.ok).toBe(false);
    for (const check of report.checks.filter((check) => !check.ok)) expect(check.fix).toMatch(/latch init/);
  });

  it('latch doctor names a missing state instead of making a new one', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    rmSync(machine.files.state);
    const report = json<DoctorJson>(await runLatch(machine, ['doctor', '--json']));
    expect(report.checks.find((check) => check.name === 'state')).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/state\.db is missing/),
      fix: expect.stringMatching(/^latch init --reset/),
    });
    expect(existsSync(machine.files.state)).toBe(false);
  });
});
