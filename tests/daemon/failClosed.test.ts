import {
  chmodSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { DoctorJson } from '../../daemon/cli/commands/doctor.ts';
import { DAEMON_REFUSED_EXIT } from '../../daemon/cli/exitCodes.ts';
import { StandInRelay } from '../support/standInRelay.ts';
import {
  claudeCodeDecision,
  hookInput,
  initMachine,
  type LatchMachine,
  newMachine,
  pairPhoneDirectly,
  runLatch,
  startDaemonForTest,
} from '../support/latchMachine.ts';

let relay: StandInRelay;
beforeAll(async () => {
  relay = await StandInRelay.start();
});
afterAll(async () => {
  await relay.stop();
});

const risky = hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' });

async function expectDeny(machine: LatchMachine, reason: RegExp, env: NodeJS.ProcessEnv = {}) {
  const ran = await runLatch(machine, ['hook', 'claude-code'], { input: risky, env });
  const output = ran.stdout.trim()
    ? (JSON.parse(ran.stdout) as {
        hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string };
      })
    : undefined;
  // Either a deny on stdout, or exit 2 (which blocks): never an allow.
  if (ran.code === 2) {
    expect(ran.stderr).toMatch(reason);
    return;
  }
  expect(ran.code).toBe(0);
  expect(output?.hookSpecificOutput.permissionDecision).toBe('deny');
  expect(output?.hookSpecificOutput.permissionDecisionReason).toMatch(reason);
}

describe('the hook fails closed', () => {
  it('denies when the daemon is not running', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    await expectDeny(machine, /daemon_unreachable: the daemon is not running/);
  });

  it('denies when Latch is not set up (no config)', async () => {
    await expectDeny(newMachine(), /config_missing: Latch is not set up on this machine; run latch init/);
  });

  it('denies, saying it cannot reach its config, when its home is not a folder it can read (review of faults)', async () => {
    const machine = newMachine();
    writeFileSync(machine.home, 'not a folder');
    await expectDeny(
      machine,
      /config_missing: Latch cannot reach .*config\.toml \(ENOTDIR\): check the modes of its folders/,
    );
  });

  it('denies when the socket path goes through a symbolic link', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    await startDaemonForTest(machine);
    const linkedRuntime = `${machine.runtime}-link`;
    symlinkSync(machine.runtime, linkedRuntime);
    await expectDeny(machine, /insecure_socket_path: .* is a symbolic link/, {
      XDG_RUNTIME_DIR: linkedRuntime,
    });
  });

  it('denies when a directory on the socket path is world-writable', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    await startDaemonForTest(machine);
    chmodSync(machine.runtime, 0o777);
    await expectDeny(machine, /insecure_socket_path: .* is writable by group or others/);
    chmodSync(machine.runtime, 0o700);
  });

  it('denies when the socket itself is open to others', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    await startDaemonForTest(machine);
    chmodSync(machine.socket, 0o666);
    await expectDeny(machine, /insecure_socket_path: .*daemon\.sock is (writable|readable)/);
  });

  it('denies with relay_unreachable when the relay cannot be reached', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    await pairPhoneDirectly(machine, 'http://127.0.0.1:9');
    await startDaemonForTest(machine);
    // Node's error code, not its message, which may quote what the far end sent.
    await expectDeny(machine, /relay_unreachable: the relay cannot be reached \(ECONNREFUSED\)/);
  });

  it('denies with relay_unreachable when the relay answers 5xx', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    await pairPhoneDirectly(machine, relay.origin);
    await startDaemonForTest(machine);
    relay.failWith = 503;
    onTestFinished(() => {
      relay.failWith = undefined;
    });
    await expectDeny(machine, /relay_unreachable/);
  });

  it('denies every gated call while the policy file is malformed, and recovers when it is fixed', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin, policy: 'default = "allow"\n' });
    await startDaemonForTest(machine);
    writeFileSync(machine.files.policy, 'default = "allow"\n[[rule]]\ntool = "Bash"\nactoin = "allow"\n');
    await expectDeny(machine, /policy_invalid|malformed: rule 1: unknown key "actoin"/);
    // A broken policy also denies what the old one allowed:
    const readX = hookInput('PreToolUse', 'Read', { file_path: '/x' });
    const read = await runLatch(machine, ['hook', 'claude-code'], { input: readX });
    expect(claudeCodeDecision(read, readX)).toBe('deny');
    writeFileSync(machine.files.policy, 'default = "allow"\n');
    const fixed = await runLatch(machine, ['hook', 'claude-code'], { input: readX });
    expect(claudeCodeDecision(fixed, readX)).toBe('allow');
  });

  it('denies with not_paired when no phone is paired', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    await startDaemonForTest(machine);
    await expectDeny(machine, /no phone is paired/);
  });

  it('refuses to start on a host key cut short, edited, or beside another host’s public half, naming the file (exit 78)', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    const other = newMachine();
    await initMachine(other, { relay: relay.origin });
    const ours = JSON.parse(readFileSync(machine.files.hostKey, 'utf8')) as Record<string, unknown>;
    const theirs = JSON.parse(readFileSync(other.files.hostKey, 'utf8')) as Record<string, unknown>;
    const damaged = [
      '{',
      'null',
      '{}',
      JSON.stringify({ ...ours, privateJwk: { ...(ours['privateJwk'] as object), d: 'AAAA' } }),
      JSON.stringify({ ...ours, id: theirs['id'], publicKey: theirs['publicKey'] }),
    ];
    const message = `latch: ${machine.files.hostKey} is not the host key latch init wrote (damaged or replaced): restore it from a backup; without it this host is set up anew (move ${machine.home} aside, latch init, latch pair)\n`;
    for (const text of damaged) {
      writeFileSync(machine.files.hostKey, text, { mode: 0o600 });
      const refused = await runLatch(machine, ['daemon'], { timeoutMs: 10_000 });
      expect(refused).toMatchObject({ code: DAEMON_REFUSED_EXIT, stderr: message });
      expect(await runLatch(machine, ['panic', 'x'])).toMatchObject({
        stderr: expect.stringContaining(message),
      });
      const doctor = JSON.parse((await runLatch(machine, ['doctor', '--json'])).stdout) as DoctorJson;
      expect(doctor.checks).toContainEqual({
        name: 'host key',
        ok: false,
        detail: message.slice('latch: '.length, -1),
        fix: `restore ${machine.files.hostKey} from a backup, or set this host up anew`,
      });
    }
  });

  it('tightens a secret file others may read, and refuses a config that is a link to a folder without changing the folder', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    chmodSync(machine.files.hostKey, 0o644);
    chmodSync(machine.home, 0o755);
    // A file of the user's, linked in place of a secret: neither tightened nor read as the token.
    const usersFile = join(dirname(machine.home), 'users-file');
    writeFileSync(usersFile, 'not a token\n', { mode: 0o644 });
    chmodSync(usersFile, 0o644);
    symlinkSync(usersFile, machine.files.hostToken);
    const started = await startDaemonForTest(machine);
    expect(started.output()).toContain(`tightened ${machine.files.hostKey} from 0644 to 0600`);
    expect(started.output()).toContain(`tightened ${machine.home} from 0755 to 0700`);
    expect(started.output()).not.toContain(`tightened ${machine.files.hostToken}`);
    expect(statSync(machine.files.hostKey).mode & 0o777).toBe(0o600);
    expect(statSync(machine.home).mode & 0o777).toBe(0o700);
    expect(statSync(usersFile).mode & 0o777).toBe(0o644);
    await started.stop();
    const doctor = await runLatch(machine, ['doctor', '--json']);
    expect(JSON.parse(doctor.stdout).checks).toContainEqual({
      name: 'file modes',
      ok: false,
      detail: `links, not files: ${machine.files.hostToken}`,
      fix: `remove ${machine.files.hostToken} (Latch never reads or writes a secret through a link)`,
    });
    rmSync(machine.files.hostToken);

    const folder = join(machine.home, 'a-folder-of-the-user');
    mkdirSync(folder, { mode: 0o755 });
    chmodSync(folder, 0o755);
    rmSync(machine.files.config);
    symlinkSync(folder, machine.files.config);
    const refused = await runLatch(machine, ['daemon'], { timeoutMs: 10_000 });
    expect(refused.code).toBe(DAEMON_REFUSED_EXIT);
    expect(refused.stderr).toContain(`${machine.files.config} is not a regular file`);
    expect(refused.stderr).not.toContain('tightened');
    expect(statSync(folder).mode & 0o777).toBe(0o755);
  });

  it('tightens the audit log’s rotated files, the relay’s folder and the folder a linked home leads to, as doctor names them (review sa)', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    // Rotated as the daemon rotates (renamed for its last line), and restored from a backup at
    // 0644: a rename keeps a file's mode.
    const lines = readFileSync(machine.files.audit, 'utf8').trimEnd().split('\n').length;
    const rotated = `${machine.files.audit}.${lines}`;
    renameSync(machine.files.audit, rotated);
    chmodSync(rotated, 0o644);
    const relayFolder = join(machine.home, 'relay');
    mkdirSync(relayFolder);
    chmodSync(relayFolder, 0o777);
    // The home, kept among dotfiles and linked into place.
    const kept = `${machine.home}-kept`;
    renameSync(machine.home, kept);
    symlinkSync(kept, machine.home);
    chmodSync(kept, 0o755);
    const before = await runLatch(machine, ['doctor', '--json']);
    const modes = (json: string) =>
      (JSON.parse(json) as DoctorJson).checks.find((check) => check.name === 'file modes');
    expect(modes(before.stdout)).toMatchObject({
      ok: false,
      detail: `others can enter ${kept}, ${relayFolder}; readable by others: ${rotated}`,
    });

    const started = await startDaemonForTest(machine);
    for (const [path, from, to] of [
      [kept, '0755', '0700'],
      [relayFolder, '0777', '0700'],
      [rotated, '0644', '0600'],
    ])
      expect(started.output()).toContain(`tightened ${path} from ${from} to ${to}`);
    await started.stop();
    const after = await runLatch(machine, ['doctor', '--json']);
    expect(modes(after.stdout)).toMatchObject({ ok: true });
  });

  it('refuses to start on a socket directory with a wider mode (exit 78: no restart loop), and removes a dead socket file', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    const directory = join(machine.runtime, 'latch');
    mkdirSync(directory, { mode: 0o777 });
    chmodSync(directory, 0o777);
    const refused = await runLatch(machine, ['daemon'], { timeoutMs: 10_000 });
    expect(refused).toMatchObject({
      code: DAEMON_REFUSED_EXIT,
      stderr: `latch: ${directory} has mode 777; it must be 0700 (chmod 700 ${directory})\n`,
    });

    chmodSync(join(machine.runtime, 'latch'), 0o700);
    const first = await startDaemonForTest(machine);
    first.child.kill('SIGKILL'); // leaves its socket file behind
    await new Promise((resolve) => first.child.once('exit', resolve));
    const second = await startDaemonForTest(machine);
    expect(second.output()).toMatch(/removed a dead socket file/);
    // A daemon already listening may go away: a restart can mend that, so it is not 78.
    const third = await runLatch(machine, ['daemon'], { timeoutMs: 10_000 });
    expect(third.code).toBe(1);
    expect(third.stderr).toMatch(/another daemon is already listening/);
    await second.stop();
    renameSync(machine.runtime, `${machine.runtime}-gone`);
    rmSync(`${machine.runtime}-gone`, { recursive: true, force: true });
  });
});
