import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
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
import { ISO_TIME, json } from '../support/cliOutput.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { runLatch } from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { runToEnd } from '../support/processes.ts';

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
      revokesAsked: 0,
      quorum: 1,
      pending: 0,
      policy: 'ok',
      config: 'ok',
      auditOverBudget: 0,
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

  it('latch request never exits 0 when it cannot write its answer, nor 2 as for a usage error', async () => {
    // Its stdout a full disk: a script reading the answer from it would find none.
    const toFullDisk = (args: string[]) =>
      runToEnd(['sh', '-c', 'exec "$@" > /dev/full', 'sh', process.execPath, LATCH_BIN, ...args], {
        env: paired.machine.env,
      });
    for (const json of [[], ['--json']]) {
      const approved = await toFullDisk(['request', '--title', 'ship it', '--tool', 'deploy-ok', ...json]);
      expect(approved).toMatchObject({ code: 3, stderr: expect.stringContaining('cannot write the answer') });
      const denied = await toFullDisk(['request', '--title', 'drop it', '--tool', 'deploy-no', ...json]);
      expect(denied).toMatchObject({ code: 1, stderr: expect.stringContaining('cannot write the answer') });
    }
  });

  it(`latch exec exits ${EXEC_DENIED} when the command is denied, and never runs it`, async () => {
    expect(EXEC_DENIED).toBe(77);
    const witness = join(mkdtempSync(join(tmpdir(), 'latch-cli-')), 'ran');
    const ran = await latch(['exec', '--', 'touch', witness]);
    expect(ran.code).toBe(77);
    expect(ran.stderr).toMatch(/^latch: not running touch \S+: policy_violation: /m);
    expect(existsSync(witness)).toBe(false);
  });

  it('latch request and latch exec in a deleted folder refuse the call, invalid_request, and run nothing', async () => {
    const root = mkdtempSync(join(tmpdir(), 'latch-cli-'));
    const witness = join(root, 'ran');
    const inDeletedFolder = (args: string[]) =>
      runToEnd(
        [
          'sh',
          '-c',
          'mkdir "$0/gone" && cd "$0/gone" && rmdir "$0/gone" && exec "$@"',
          root,
          process.execPath,
          LATCH_BIN,
          ...args,
        ],
        { env: paired.machine.env },
      );
    const requested = await inDeletedFolder(['request', '--title', 'ship it', '--tool', 'deploy-ok']);
    expect(requested).toMatchObject({
      code: 3,
      stdout: expect.stringMatching(/^\w+: invalid_request: the current folder no longer exists\n$/),
    });
    const executed = await inDeletedFolder(['exec', '--', 'touch', witness]);
    expect(executed).toMatchObject({
      code: EXEC_DENIED,
      stderr: `latch: not running touch ${witness}: invalid_request: the current folder no longer exists\n`,
    });
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
        'host key',
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

  it('latch audit verify --json gives the lines and files of an intact chain, and its first line', async () => {
    const ran = await latch(['audit', 'verify', '--json']);
    expect(ran.code).toBe(0);
    expect(json<AuditVerifyJson>(ran)).toEqual({
      ok: true,
      lines: expect.any(Number),
      files: ['audit.log'],
      firstSeq: 1,
    });
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
