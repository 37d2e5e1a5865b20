import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DoctorJson } from '../../daemon/cli/commands/doctor.ts';
import { json } from '../support/cliOutput.ts';
import { ConfigKeeper } from '../../daemon/config/configKeeper.ts';
import { initMachine, newMachine, runLatch, withStore, type LatchMachine } from '../support/latchMachine.ts';

describe('a config.toml key Latch does not know', () => {
  it.each([
    [
      'a misspelt key',
      (text: string) => text.replace('quorum = 1', 'quroum = 1'),
      'quroum = 1',
      'kill_switch.quroum',
    ],
    [
      'an unknown table',
      (text: string) => `${text}\n[kill_swich]\nquorum = 2\n`,
      '[kill_swich]',
      'kill_swich',
    ],
  ])('is an error naming %s and its line', async (_what, edit, marker, setting) => {
    const machine: LatchMachine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const text = edit(readFileSync(machine.files.config, 'utf8'));
    writeFileSync(machine.files.config, text);
    const line = text.split('\n').indexOf(marker) + 1;
    const message = `${machine.files.config} line ${line}: unknown setting "${setting}"`;

    expect(await runLatch(machine, ['devices'])).toMatchObject({ code: 1, stderr: `latch: ${message}\n` });
    const report = json<DoctorJson>(await runLatch(machine, ['doctor', '--json']));
    expect(report.checks[0]).toEqual({
      name: 'config',
      ok: false,
      detail: message,
      fix: `edit ${machine.files.config}`,
    });
    // A gated call is refused, not run with the setting at its default.
    const request = await runLatch(machine, ['request', '--title', 'x', '--json']);
    expect(request.code).toBe(3);
  });
});

describe('latch init', () => {
  it('closes a home it finds open to others before it writes a key there, and says so (review sa)', async () => {
    const machine = newMachine();
    mkdirSync(machine.home, { recursive: true });
    chmodSync(machine.home, 0o777);
    const ran = await runLatch(machine, ['init', '--relay', 'http://127.0.0.1:9']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`tightened ${machine.home} from 0777 to 0700`);
    expect(statSync(machine.home).mode & 0o777).toBe(0o700);
  });

  it('asks one phone to resume by default: most people have one', async () => {
    const machine = newMachine();
    expect((await runLatch(machine, ['init', '--relay', 'http://127.0.0.1:9'])).code).toBe(0);
    expect(readFileSync(machine.files.config, 'utf8')).toMatch(/^quorum = 1$/m);
  });

  it.each(['', 'ftp://relay.example', 'http://relay.example', 'not a url'])(
    'refuses --relay %j, which the daemon would not start with, and writes nothing',
    async (relay) => {
      const machine = newMachine();
      expect(await runLatch(machine, ['init', '--relay', relay])).toMatchObject({
        code: 2,
        stderr: 'latch: relay.url must be an https URL (http only for localhost)\n',
      });
      expect(existsSync(machine.files.config)).toBe(false);
      expect(existsSync(machine.files.hostKey)).toBe(false);
    },
  );

  it.each(['\u001b[31mred\u0007', 'x'.repeat(65), '  ', 'build\u200bbox'])(
    'refuses --name %j, which a terminal would act on, a phone would show otherwise or the wire would cut, and writes nothing (review R8)',
    async (name) => {
      const machine = newMachine();
      expect(
        await runLatch(machine, ['init', '--relay', 'http://127.0.0.1:9', '--name', name]),
      ).toMatchObject({
        code: 2,
        stderr: expect.stringContaining(
          '--name must be 1 to 64 bytes, without control or invisible characters',
        ),
      });
      expect(existsSync(machine.files.config)).toBe(false);
    },
  );

  it('prints a name written into config.toml by hand as a phone shows it, not as a terminal would act on it', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const text = readFileSync(machine.files.config, 'utf8').replace(
      /^name = .*$/m,
      'name = "red\\u001b[31m\\u0007"',
    );
    writeFileSync(machine.files.config, text);
    withStore(machine, (store, audit) =>
      new ConfigKeeper(machine.files.config, store, audit).approve(text, 'test setup'),
    );
    const listed = await runLatch(machine, ['hosts']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/this host {2}\S+ {2}red/);
    expect(listed.stdout).not.toMatch(/[\u0000-\u0008\u001b]/);
  });

  it('keeps 2 for a config that names no quorum, so an upgrade loosens nothing', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const withoutQuorum = readFileSync(machine.files.config, 'utf8').replace(/^quorum = 1\n/m, '');
    writeFileSync(machine.files.config, withoutQuorum);
    const report = json<DoctorJson>(await runLatch(machine, ['doctor', '--json']));
    expect(report.checks.find((check) => check.name === 'quorum reachable')).toMatchObject({
      detail: 'resuming takes 2, 0 paired',
    });
  });

  it('says on --reset that a quorum kept above 1 holds at once, for phones not yet paired again', async () => {
    const machine = newMachine();
    expect((await runLatch(machine, ['init', '--relay', 'http://127.0.0.1:9', '--quorum', '2'])).code).toBe(
      0,
    );
    const reset = await runLatch(machine, ['init', '--reset']);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain(
      `Note: config.toml keeps kill_switch.quorum = 2, which holds at once: resuming after a freeze takes 2 phones paired again. Lower it in ${machine.files.config} first if you will pair fewer.`,
    );
    writeFileSync(
      machine.files.config,
      readFileSync(machine.files.config, 'utf8').replace(/^quorum = 2$/m, 'quorum = 1'),
    );
    expect((await runLatch(machine, ['init', '--reset'])).stdout).not.toContain('kill_switch.quorum');
  });
});
