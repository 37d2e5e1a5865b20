import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';
import type { DevicesJson } from '../../daemon/cli/commands/devices.ts';
import { json } from '../support/cliOutput.ts';
import { RelayDriver } from '../support/relayDriver.ts';
import { pairSoftwarePhone } from '../support/softwarePairing.ts';
import { auditLines, initMachine, newMachine, runLatch, type LatchMachine } from '../support/latchMachine.ts';

/**
 * A host's first phone is trusted on the QR secret, which whoever sees the screen holds too: one
 * who scans it and answers first would be paired, and the person's own phone refused. So on a
 * terminal the person types the code their phone shows; the terminal does not print its own
 * first, or it could be copied from there.
 */
const state = mkdtempSync(join(tmpdir(), 'latch-first-phone-relay-'));
let relayProcess: RelayProcess;
let relay: RelayDriver;

beforeAll(async () => {
  const envFile = join(state, 'relay.env');
  ensureRelayEnvFile(envFile);
  relayProcess = await startRelay({ persistTo: state, envFile });
  relay = new RelayDriver(relayProcess.origin, (url, init) => fetch(url, init));
});

afterAll(async () => {
  await relayProcess.stop();
  rmSync(state, { recursive: true, force: true });
});

async function freshHost(): Promise<LatchMachine> {
  const machine = newMachine();
  await initMachine(machine, { relay: relayProcess.origin });
  return machine;
}

/** The phones the host trusts: paired and not revoked. */
const trusted = async (machine: LatchMachine) =>
  json<DevicesJson>(await runLatch(machine, ['devices', '--json']))
    .devices.filter((device) => !device.revoked)
    .map((device) => device.id);

describe('the first phone of a host, on a terminal', () => {
  it('is trusted once the code it shows is typed there, which the terminal never printed', async () => {
    const machine = await freshHost();
    const paired = await pairSoftwarePhone(machine, relay, { typeOnTerminal: (shown) => shown });
    expect(paired.code).toBe(0);
    const beforeTyping = paired.stdout.slice(0, paired.stdout.indexOf('to trust it:'));
    expect(beforeTyping).toContain('Type the code Software phone shows');
    expect(beforeTyping).not.toContain(paired.phoneCode);
    expect(paired.stdout).toContain('Paired Software phone.');
    expect(await trusted(machine)).toEqual([paired.phone.id]);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'paired', device: paired.phone.id, codeTyped: true }),
    );
  }, 60_000);

  it('is refused when another code is typed, and nothing is stored', async () => {
    const machine = await freshHost();
    const paired = await pairSoftwarePhone(machine, relay, {
      typeOnTerminal: (shown) => String((Number(shown) + 1) % 1_000_000).padStart(6, '0'),
      refusalExpected: true,
    });
    expect(paired.code).toBe(1);
    expect(paired.stdout).toContain('the code does not match; the phone was not added');
    expect(await trusted(machine)).toEqual([]);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'pairing_refused', device: paired.phone.id, code: 'code_mismatch' }),
    );
    expect(auditLines(machine)).not.toContainEqual(expect.objectContaining({ event: 'paired' }));
  }, 60_000);
});

describe('the first phone of a host, once its code is typed', () => {
  it('is not trusted when the relay does not take the confirmation (it went away meanwhile)', async () => {
    const own = mkdtempSync(join(tmpdir(), 'latch-first-phone-gone-'));
    const envFile = join(own, 'relay.env');
    ensureRelayEnvFile(envFile);
    const goingAway = await startRelay({ persistTo: own, envFile });
    try {
      const machine = newMachine();
      await initMachine(machine, { relay: goingAway.origin });
      const paired = await pairSoftwarePhone(
        machine,
        new RelayDriver(goingAway.origin, (url, init) => fetch(url, init)),
        {
          // The code is right, but the relay is gone before latch pair confirms it there.
          typeOnTerminal: async (shown) => {
            await goingAway.stop();
            return shown;
          },
          refusalExpected: true,
        },
      );
      expect(paired.code).toBe(1);
      expect(await trusted(machine)).toEqual([]);
      expect(`${paired.stdout}${paired.stderr}`).toMatch(
        /the relay did not take the confirmation: .*; the phone was not added/,
      );
      expect(auditLines(machine)).not.toContainEqual(expect.objectContaining({ event: 'paired' }));
    } finally {
      await goingAway.stop();
      rmSync(own, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the first phone of a host, with no terminal (an agent, a script, npm start)', () => {
  it('is trusted on the QR code alone, and the code is printed to compare', async () => {
    const machine = await freshHost();
    const paired = await pairSoftwarePhone(machine, relay);
    expect(paired.stdout).toContain(`Your phone shows this code: ${paired.phoneCode}`);
    expect(paired.stdout).toContain('this first phone is trusted on the QR code alone');
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'paired', device: paired.phone.id, codeTyped: false }),
    );
  }, 60_000);

  it('is refused once every phone was revoked; the code typed on a terminal pairs again', async () => {
    const machine = await freshHost();
    const first = await pairSoftwarePhone(machine, relay);
    expect((await runLatch(machine, ['devices', '--revoke', first.phone.id])).code).toBe(0);

    const untyped = await pairSoftwarePhone(machine, relay, { name: 'Untyped phone', refusalExpected: true });
    expect(untyped.code).toBe(1);
    expect(untyped.stderr).toContain('every phone of this host is revoked: run latch pair in a terminal');
    expect(untyped.stdout).not.toContain(untyped.phoneCode);

    const typed = await pairSoftwarePhone(machine, relay, {
      name: 'Typed phone',
      typeOnTerminal: (shown) => shown,
    });
    expect(typed.code).toBe(0);
    expect(typed.stdout).toContain('Every phone of this host was revoked.');
    expect(await trusted(machine)).toEqual([typed.phone.id]);
  }, 90_000);
});
