import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditVerifyJson } from '../../daemon/cli/commands/audit.ts';
import type { DevicesJson } from '../../daemon/cli/commands/devices.ts';
import type { DoctorJson } from '../../daemon/cli/commands/doctor.ts';
import { EXEC_DENIED } from '../../daemon/cli/commands/exec.ts';
import type { HostsJson } from '../../daemon/cli/commands/hosts.ts';
import type { RequestJson } from '../../daemon/cli/commands/request.ts';
import type { StatusJson } from '../../daemon/cli/commands/status.ts';
import { USAGE_EXIT } from '../../daemon/cli/exitCodes.ts';
import {
  initMachine,
  newMachine,
  pairPhoneDirectly,
  runLatch,
  type LatchMachine,
  type Ran,
} from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

/**
 * `latch` as a script reads it: exit codes that mean one thing each, usage errors that exit 2
 * wherever they come from, and `--json` objects of a documented shape (docs/daemon.md#for-scripts).
 */

const POLICY = `
default = "ask"

[[rule]]
name = "scripts may deploy"
tool = "deploy-ok"
action = "allow"

[[rule]]
name = "never this"
tool = "deploy-no"
action = "deny"

[[rule]]
name = "no touching"
tool = "exec"
command = "touch *"
action = "deny"
`;

/** The one JSON object a `--json` command prints: one line, nothing else on stdout. */
function json<T>(ran: Ran): T {
  expect(ran.stdout.endsWith('\n')).toBe(true);
  expect(ran.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(ran.stdout) as T;
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('usage errors', () => {
  const machine = newMachine();

  it.each([
    ['an unknown command', ['deploy'], /^latch: unknown command 'deploy'/],
    ['an unknown option', ['status', '--verbose'], /^latch: unknown option '--verbose'/],
    ['a missing required option', ['request'], /^latch: required option '--title <title>' not specified/],
    ['a missing argument', ['exec'], /^latch: missing required argument 'command'/],
    ['a value not among the choices', ['install', 'vim'], /^latch: .*'vim' is invalid .*claude-code, codex/],
    ['a command group without its command', ['audit'], /Usage: latch audit/],
    [
      'a bad value Latch itself checks',
      ['init', '--fleet', 'not an id'],
      /^latch: --fleet is not a valid fleet id/,
    ],
  ])('exits 2 on %s, whether commander or Latch found it', async (_what, args, message) => {
    const ran = await runLatch(machine, args);
    expect(ran.code).toBe(USAGE_EXIT);
    expect(ran.stderr).toMatch(message);
    expect(ran.stdout).toBe('');
  });

  it.each([['--help'], ['--version'], ['request', '--help'], ['help', 'exec']])(
    'exits 0 for %s',
    async (...args) => {
      expect((await runLatch(machine, args)).code).toBe(0);
    },
  );

  it.each([
    ['request', '--timeout', 'abc', 'whole seconds from 1 to 86400'],
    ['request', '--timeout', '-5', 'whole seconds from 1 to 86400'],
    ['request', '--timeout', '0', 'whole seconds from 1 to 86400'],
    ['request', '--timeout', '1.5', 'whole seconds from 1 to 86400'],
    ['request', '--timeout', '86401', 'whole seconds from 1 to 86400'],
    ['request', '--risk', 'extreme', 'low, medium, high, critical'],
    ['exec', '--risk', 'extreme', 'low, medium, high, critical'],
    ['init', '--quorum', '0', 'a whole number from 1 to 32'],
    ['init', '--quorum', 'two', 'a whole number from 1 to 32'],
    ['init', '--quorum', '33', 'a whole number from 1 to 32'],
    ['pair', '--timeout', 'abc', 'whole seconds from 60 to 3600'],
    ['pair', '--timeout', '59', 'whole seconds from 60 to 3600'],
  ])('refuses latch %s %s %s as a usage error naming the option', async (command, option, value, range) => {
    const rest = command === 'request' ? ['--title', 'x'] : command === 'exec' ? ['--', 'true'] : [];
    const ran = await runLatch(machine, [command, option, value, ...rest]);
    expect(ran.code).toBe(USAGE_EXIT);
    expect(ran.stderr).toContain(`latch: option '${option} <`);
    expect(ran.stderr).toContain(`argument '${value}' is invalid`);
    expect(ran.stderr).toContain(range);
    // Refused before anything was done: no config written, nothing asked.
    expect(existsSync(machine.files.config)).toBe(false);
    expect(ran.stdout).toBe('');
  });
});

describe('latch against a running daemon', () => {
  let paired: PairedDaemon;
  beforeAll(async () => {
    paired = await startPairedDaemon({ policy: POLICY });
  });
  afterAll(() => paired.stop());
  const latch = (args: string[]) => runLatch(paired.machine, args);

  it('latch status exits 0 when armed, and --json says so with the same code', async () => {
    const text = await latch(['status']);
    expect(text).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^running: armed \(relay connected, 1 phone, quorum 1/),
    });
    const ran = await latch(['status', '--json']);
    expect(ran.code).toBe(0);
    expect(json<StatusJson>(ran)).toEqual({
      state: 'armed',
      reason: null,
      epoch: expect.any(Number),
      relay: 'connected',
      devices: 1,
      quorum: 1,
      pending: 0,
      policy: 'ok',
      config: 'ok',
    });
  });

  it('latch request exits 0 approved and 1 denied, and --json gives the same answer', async () => {
    const approved = await latch(['request', '--title', 'ship it', '--tool', 'deploy-ok']);
    expect(approved).toMatchObject({ code: 0, stdout: expect.stringMatching(/^approved: /) });
    const approvedJson = await latch(['request', '--title', 'ship it', '--tool', 'deploy-ok', '--json']);
    expect(approvedJson.code).toBe(0);
    expect(json<RequestJson>(approvedJson)).toEqual({
      decision: 'approved',
      via: 'policy',
      reason: expect.any(String),
      requestId: null,
    });

    const denied = await latch(['request', '--title', 'drop it', '--tool', 'deploy-no']);
    expect(denied).toMatchObject({ code: 1, stdout: expect.stringMatching(/^denied: policy_violation: /) });
    const deniedJson = await latch(['request', '--title', 'drop it', '--tool', 'deploy-no', '--json']);
    expect(deniedJson.code).toBe(1);
    expect(json<RequestJson>(deniedJson)).toEqual({
      decision: 'denied',
      blockReason: 'policy_violation',
      reason: expect.stringMatching(/^policy_violation: /),
      requestId: null,
    });
  });

  it(`latch exec exits ${EXEC_DENIED} when the command is denied, and never runs it`, async () => {
    expect(EXEC_DENIED).toBe(77);
    const witness = join(mkdtempSync(join(tmpdir(), 'latch-cli-')), 'ran');
    const ran = await latch(['exec', '--', 'touch', witness]);
    expect(ran.code).toBe(77);
    expect(ran.stderr).toMatch(/^latch: not running touch \S+: policy_violation: /m);
    expect(existsSync(witness)).toBe(false);
  });

  it('latch devices --json lists each phone with its id, name, pairing time and state', async () => {
    const { devices } = json<DevicesJson>(await latch(['devices', '--json']));
    expect(devices).toEqual([
      {
        id: paired.phones[0].id,
        name: 'Test phone',
        pairedAt: expect.stringMatching(ISO_TIME),
        revoked: false,
      },
    ]);
  });

  it('latch hosts --json gives this host, its fleet and its relay', async () => {
    const ran = await latch(['hosts', '--json']);
    expect(ran.code).toBe(0);
    const fleet = /fleet = "([^"]+)"/.exec(readFileSync(paired.machine.files.config, 'utf8'))![1];
    expect(json<HostsJson>(ran)).toEqual({
      host: { id: expect.any(String), name: 'test-box' },
      fleet,
      relay: paired.relay.origin,
    });
  });

  it('latch doctor --json gives every check, and exits 0 only when all pass', async () => {
    const ran = await latch(['doctor', '--json']);
    const report = json<DoctorJson>(ran);
    expect(report.checks.map((check) => check.name)).toEqual(
      expect.arrayContaining([
        'config',
        'state',
        'file modes',
        'socket privacy',
        'relay reachable',
        'devices paired',
        'quorum reachable',
        'policy',
      ]),
    );
    for (const check of report.checks) {
      expect(check).toEqual({
        name: expect.any(String),
        ok: expect.any(Boolean),
        detail: expect.any(String),
        fix: check.ok ? null : expect.any(String),
      });
    }
    expect(report.ok).toBe(report.checks.every((check) => check.ok));
    expect(ran.code).toBe(report.ok ? 0 : 1);
    expect(report.checks.find((check) => check.name === 'state')).toMatchObject({ ok: true });
  });

  it('latch audit verify --json gives the number of lines of an intact chain', async () => {
    const ran = await latch(['audit', 'verify', '--json']);
    expect(ran.code).toBe(0);
    expect(json<AuditVerifyJson>(ran)).toEqual({ ok: true, lines: expect.any(Number) });
  });

  it('latch status exits 1 when frozen, 2 when the daemon is gone, with and without --json', async () => {
    expect((await latch(['panic', 'incident', '7'])).code).toBe(0);
    expect(await latch(['status'])).toMatchObject({
      code: 1,
      stdout: expect.stringMatching(/^frozen: incident 7 /),
    });
    const frozen = await latch(['status', '--json']);
    expect(frozen.code).toBe(1);
    expect(json<StatusJson>(frozen)).toMatchObject({ state: 'frozen', reason: 'incident 7', devices: 1 });

    await paired.daemon.stop();
    expect(await latch(['status'])).toMatchObject({
      code: 2,
      stdout: expect.stringMatching(/^unreachable: /),
    });
    const gone = await latch(['status', '--json']);
    expect(gone.code).toBe(2);
    expect(json<StatusJson>(gone)).toEqual({
      state: 'unreachable',
      error: expect.stringMatching(/not running/),
    });
  });
});

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
    expect(ran.stderr).toMatch(/^latch: not running true: config_missing: /m);
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

  it('latch audit verify --json names the first broken line, exit 1', async () => {
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

describe('latch completion', () => {
  const machine = newMachine();
  let commands: string[];
  beforeAll(async () => {
    // The commands as `latch --help` lists them: the script must offer every one.
    const help = (await runLatch(machine, ['--help'])).stdout;
    commands = [...help.split('Commands:\n')[1]!.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!);
    expect(commands).toEqual(expect.arrayContaining(['init', 'request', 'exec', 'completion', 'help']));
  });

  it.each(['bash', 'zsh', 'fish'])('prints a %s script with every command and option', async (shell) => {
    const ran = await runLatch(machine, ['completion', shell]);
    expect(ran.code).toBe(0);
    for (const word of [
      ...commands,
      'verify',
      'deploy',
      'claude-code',
      'codex',
      '--json',
      '--quorum',
      '--timeout',
      '--risk',
      '--dry-run',
      '--wrangler',
    ])
      expect(ran.stdout).toContain(shell === 'fish' ? word.replace(/^--/, '-l ') : word);
  });

  it('refuses a shell it has no script for, as a usage error', async () => {
    expect((await runLatch(machine, ['completion', 'tcsh'])).code).toBe(USAGE_EXIT);
  });

  it('completes commands, subcommands, options and their values in bash', async () => {
    const script = join(mkdtempSync(join(tmpdir(), 'latch-completion-')), 'latch.bash');
    writeFileSync(script, (await runLatch(machine, ['completion', 'bash'])).stdout);
    const complete = (...words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _latch; echo "\${COMPREPLY[*]}"`,
          script,
          ...words,
        ],
        { encoding: 'utf8' },
      ).trim();
    expect(complete('latch', 're')).toBe('request relay');
    expect(complete('latch', 'audit', '')).toBe('verify help -h --help');
    expect(complete('latch', 'relay', '')).toBe('deploy help -h --help');
    expect(complete('latch', 'relay', 'deploy', '--d')).toBe('--dry-run');
    expect(complete('latch', 'install', 'c')).toBe('claude-code codex');
    expect(complete('latch', 'request', '--risk', 'h')).toBe('high');
    expect(complete('latch', 'request', '--title', 'init', '--j')).toBe('--json');
    // After --, the words are the command latch exec runs: Latch offers nothing of its own.
    expect(complete('latch', 'exec', '--', 'ls', '--')).toBe('');
  });
});

describe('latch init', () => {
  it('asks one phone to resume by default: most people have one', async () => {
    const machine = newMachine();
    expect((await runLatch(machine, ['init', '--relay', 'http://127.0.0.1:9'])).code).toBe(0);
    expect(readFileSync(machine.files.config, 'utf8')).toMatch(/^quorum = 1$/m);
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
});
