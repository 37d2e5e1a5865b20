import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { resumeChallenge } from '../../shared/kill-switch/resumeChallenge.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { createPhone, type TestPhone } from '../support/phone.ts';
import { StandInRelay } from '../support/standInRelay.ts';
import {
  auditLines,
  hookInput,
  initMachine,
  newMachine,
  pairPhoneDirectly,
  runLatch,
  startDaemon,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

const POLICY = `
default = "ask"
[[rule]]
name = "sleeping is fine"
tool = "exec"
command = "sleep *"
action = "allow"
[[rule]]
name = "reads"
tool = "Read"
action = "allow"
`;

let relay: StandInRelay;
let machine: LatchMachine;
let daemon: RunningDaemon;
let phones: TestPhone[];
let paired: PairedDaemon;

beforeAll(async () => {
  paired = await startPairedDaemon({ quorum: 2, policy: POLICY, phones: 2 });
  ({ relay, machine, daemon, phones } = paired);
});

afterAll(() => paired.stop());

async function freezeFrom(phone: TestPhone, epoch: number, reason = 'prod incident 412') {
  const envelope = await signEnvelope(
    'freeze',
    { fleet: relay.requests[0]?.fleet ?? (await fleetOf()), reason },
    { role: 'device', id: phone.id },
    phone.deviceKeys.privateKey,
  );
  relay.send({ v: PROTOCOL_VERSION, type: 'frozen', epoch, envelope, at: Date.now() });
}

async function fleetOf(): Promise<string> {
  return /fleet = "([^"]+)"/.exec(readFileSync(machine.files.config, 'utf8'))![1]!;
}

async function vote(phone: TestPhone, epoch: number): Promise<ResumeVote> {
  const fleet = await fleetOf();
  const assertion = await phone.authenticator.assert({
    rpId: '127.0.0.1',
    origin: relay.origin,
    challenge: await resumeChallenge({ fleet, epoch }),
  });
  return { v: PROTOCOL_VERSION, fleet, epoch, device: phone.id, assertion };
}

const processState = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0];

describe('the kill switch on the host', () => {
  it('blocks the next call with kill_switch, stops what latch exec started, and makes status exit 1', async () => {
    const exec = spawn(
      process.execPath,
      [new URL('../../daemon/bin/latch.cjs', import.meta.url).pathname, 'exec', '--', 'sleep', '1000'],
      { env: machine.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let execErr = '';
    exec.stderr.on('data', (chunk: Buffer) => (execErr += chunk.toString()));
    // The command runs as a child of `latch exec`, in its own process group.
    await expect
      .poll(() => readFileSync(`/proc/${exec.pid}/task/${exec.pid}/children`, 'utf8').trim(), {
        timeout: 10_000,
      })
      .not.toBe('');
    const sleeper = Number(
      readFileSync(`/proc/${exec.pid}/task/${exec.pid}/children`, 'utf8').trim().split(' ')[0],
    );
    expect(processState(sleeper)).toMatch(/[SR]/);

    await freezeFrom(phones[0]!, 1);

    await expect.poll(() => processState(sleeper), { timeout: 5000 }).toBe('T');
    const blocked = await runLatch(machine, ['hook', 'claude-code'], {
      input: hookInput('PreToolUse', 'Read', { file_path: '/x' }),
    });
    expect(JSON.parse(blocked.stdout).hookSpecificOutput).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(
        /^latch: kill_switch: the fleet is frozen \(prod incident 412\)/,
      ),
    });
    const status = await runLatch(machine, ['status']);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/^frozen: prod incident 412/);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'freeze', epoch: 1, verified: true, reason: 'prod incident 412' }),
    );
    expect(execErr).toMatch(/frozen/);
    // A stopped process ignores SIGTERM until continued: end both for good.
    process.kill(sleeper, 'SIGKILL');
    exec.kill('SIGKILL');
  });

  it('stays frozen on votes it cannot verify, or on too few', async () => {
    const stranger = await createPhone('Stranger');
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'resumed',
      epoch: 1,
      votes: [await vote(stranger, 1), await vote(phones[0]!, 1)],
      at: Date.now(),
    });
    await expect
      .poll(() => auditLines(machine).some((line) => line['event'] === 'resume_refused'))
      .toBe(true);
    expect((await runLatch(machine, ['status'])).code).toBe(1);
  });

  it('refuses votes from an earlier freeze', async () => {
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'resumed',
      epoch: 1,
      votes: [await vote(phones[0]!, 0), await vote(phones[1]!, 0)],
      at: Date.now(),
    });
    await expect
      .poll(() => auditLines(machine).filter((line) => line['event'] === 'resume_refused').length)
      .toBe(2);
    expect((await runLatch(machine, ['status'])).code).toBe(1);
  });

  it('resumes on its quorum of verified votes from distinct phones, and calls pass again', async () => {
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'resumed',
      epoch: 1,
      votes: [await vote(phones[0]!, 1), await vote(phones[1]!, 1)],
      at: Date.now(),
    });
    await expect.poll(async () => (await runLatch(machine, ['status'])).code).toBe(0);
    const read = await runLatch(machine, ['hook', 'claude-code'], {
      input: hookInput('PreToolUse', 'Read', { file_path: '/x' }),
    });
    expect(JSON.parse(read.stdout).hookSpecificOutput.permissionDecision).toBe('allow');
  });

  it('honours a freeze it cannot verify (the safe direction), and says so in the audit log', async () => {
    const stranger = await createPhone('Stranger');
    await freezeFrom(stranger, 2, 'unverifiable');
    await expect.poll(async () => (await runLatch(machine, ['status'])).code).toBe(1);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'freeze', epoch: 2, verified: false }),
    );
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'resumed',
      epoch: 2,
      votes: [await vote(phones[0]!, 2), await vote(phones[1]!, 2)],
      at: Date.now(),
    });
    await expect.poll(async () => (await runLatch(machine, ['status'])).code).toBe(0);
  });

  it('keeps the freeze across a daemon restart', async () => {
    await freezeFrom(phones[1]!, 3, 'before restart');
    await expect.poll(async () => (await runLatch(machine, ['status'])).code).toBe(1);
    await daemon.stop();
    daemon = await startDaemon(machine);
    expect((await runLatch(machine, ['status'])).stdout).toMatch(/^frozen: before restart/);
  });

  it('latch panic freezes the host at once and asks the relay to freeze the fleet', async () => {
    const fresh = newMachine();
    await initMachine(fresh, { relay: relay.origin });
    const freshDaemon = await startDaemon(fresh);
    const panic = await runLatch(fresh, ['panic', 'the', 'agent', 'went', 'rogue']);
    expect(panic).toMatchObject({ code: 0, stdout: 'frozen: the fleet is frozen\n' });
    expect(relay.freezes.at(-1)).toMatchObject({
      kind: 'freeze',
      body: { reason: 'the agent went rogue' },
      signer: { role: 'host' },
    });
    expect((await runLatch(fresh, ['status'])).code).toBe(1);
    await freshDaemon.stop();
  });

  it('freezes in strict mode once the relay has been unreachable past the grace period', async () => {
    const strict = newMachine();
    await initMachine(strict, {
      relay: 'http://127.0.0.1:9',
      config: (text) =>
        text.replace('strict = false', 'strict = true').replace('grace_seconds = 120', 'grace_seconds = 1'),
    });
    await pairPhoneDirectly(strict, 'http://127.0.0.1:9');
    const strictDaemon = await startDaemon(strict);
    await expect
      .poll(async () => (await runLatch(strict, ['status'])).stdout, { timeout: 10_000 })
      .toMatch(/^frozen: the relay has been unreachable/);
    await strictDaemon.stop();
  });
});
