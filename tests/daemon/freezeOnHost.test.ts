import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import { createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import type { StandInRelay } from '../support/standInRelay.ts';
import {
  auditLines,
  claudeCodeDecision,
  claudeCodeReads,
  hookInput,
  initMachine,
  type LatchMachine,
  newMachine,
  pairPhoneDirectly,
  runLatch,
  type RunningDaemon,
  startDaemonForTest,
  withStore,
} from '../support/latchMachine.ts';
import {
  KILL_SWITCH_POLICY,
  audited,
  sendFreeze,
  sendVotes,
  signFreeze,
  statusCode,
  vote,
} from '../support/killSwitchRelay.ts';
import { restartDaemon, startPairedDaemon } from '../support/pairedDaemon.ts';
import { isHeld, killAll } from '../support/processes.ts';
import { LATCH_BIN } from '../support/latchCli.ts';

/** The WebAuthn sign counter an assertion carries (authenticatorData bytes 33–36). */
const counterOf = (vote: ResumeVote) =>
  new DataView(fromBase64url(vote.assertion.authenticatorData).buffer).getUint32(33);

const processState = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0];

describe('the kill switch on the host', () => {
  let relay: StandInRelay;
  let machine: LatchMachine;
  let daemon: RunningDaemon;
  let phones: TestPhone[];

  // A host of its own for each test, so that each runs alone (-t) and a failure stays its own.
  beforeEach(async () => {
    ({ relay, machine, daemon, phones } = await startPairedDaemon({
      quorum: 2,
      policy: KILL_SWITCH_POLICY,
      phones: 2,
    }));
  });

  afterEach(async () => {
    await daemon.stop();
    await relay.stop();
  });

  /** A phone's signed freeze, forwarded by the relay; its id, once the host holds it. */
  async function freezeHost(phone = phones[0]!, reason?: string, epoch = 1): Promise<string> {
    const envelope = await signFreeze(machine, phone, reason);
    sendFreeze(relay, envelope, epoch);
    await expect.poll(() => statusCode(machine)).toBe(1);
    return freezeId(envelope);
  }

  it('blocks the next call with kill_switch, stops what latch exec started, and makes status exit 1', async () => {
    const exec = spawn(process.execPath, [LATCH_BIN, 'exec', '--', 'sleep', '1000'], {
      env: machine.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // A stopped process ignores SIGTERM until continued: end both for good, pass or fail.
    const started = [exec.pid!];
    onTestFinished(() => killAll(started));
    let execErr = '';
    exec.stderr.on('data', (chunk: Buffer) => (execErr += chunk.toString()));
    // The command runs as a child of `latch exec`, in its own process group.
    await expect
      .poll(() => readFileSync(`/proc/${exec.pid}/task/${exec.pid}/children`, 'utf8').trim())
      .not.toBe('');
    const sleeper = Number(
      readFileSync(`/proc/${exec.pid}/task/${exec.pid}/children`, 'utf8').trim().split(' ')[0],
    );
    started.unshift(sleeper);
    expect(processState(sleeper)).toMatch(/[SR]/);

    const envelope = await signFreeze(machine, phones[0]!);
    const first = await freezeId(envelope);
    sendFreeze(relay, envelope, 1);

    // Stopped (T), or frozen in latch exec's cgroup where the machine gives it one.
    await expect.poll(() => isHeld(sleeper)).toBe(true);
    const readX = hookInput('PreToolUse', 'Read', { file_path: '/x' });
    const blocked = await runLatch(machine, ['hook', 'claude-code'], { input: readX });
    expect(claudeCodeReads(blocked, readX)?.['hookSpecificOutput']).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringMatching(
        /^latch: kill_switch: the fleet is frozen \(prod incident 412\)/,
      ),
    });
    const status = await runLatch(machine, ['status']);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/^frozen: prod incident 412 \(epoch 1;/);
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({
        event: 'freeze',
        epoch: 1,
        freeze: first,
        verified: true,
        reason: 'prod incident 412',
      }),
    );
    expect(execErr).toMatch(/frozen/);
  });

  it('stays frozen on votes it cannot verify, or on too few', async () => {
    const first = await freezeHost();
    const stranger = await createPhone('Stranger');
    sendVotes(relay, first, [
      await vote(machine, relay, stranger, first),
      await vote(machine, relay, phones[0]!, first),
    ]);
    await expect.poll(() => audited(machine, 'resume_refused', first).length).toBe(1);
    expect(audited(machine, 'resume_refused', first)[0]).toMatchObject({
      votes: [phones[0]!.id],
      needed: 2,
      refused: [{ device: stranger.id, code: 'unknown_credential' }],
    });
    expect(await statusCode(machine)).toBe(1);
  });

  it('refuses votes for any other freeze than the one it holds', async () => {
    const first = await freezeHost();
    const other = await freezeId(await signFreeze(machine, phones[0]!, 'never sent'));
    sendVotes(relay, first, [
      await vote(machine, relay, phones[0]!, other),
      await vote(machine, relay, phones[1]!, other),
    ]);
    await expect.poll(() => audited(machine, 'resume_refused', first).length).toBe(1);
    expect(audited(machine, 'resume_refused', first)[0]).toMatchObject({
      refused: [
        { device: phones[0]!.id, code: 'stale_freeze' },
        { device: phones[1]!.id, code: 'stale_freeze' },
      ],
    });
    expect(await statusCode(machine)).toBe(1);
  });

  it('resumes on its quorum of verified votes from distinct phones, and calls pass again', async () => {
    const first = await freezeHost();
    sendVotes(relay, first, [await vote(machine, relay, phones[0]!, first)]);
    await expect.poll(() => audited(machine, 'resume_refused', first).length).toBe(1);
    sendVotes(relay, first, [
      await vote(machine, relay, phones[0]!, first),
      await vote(machine, relay, phones[1]!, first),
    ]);
    await expect.poll(() => statusCode(machine)).toBe(0);
    // The first phone's vote was counted in the first frame already: still one vote.
    expect(audited(machine, 'resume', first)).toEqual([
      expect.objectContaining({
        votes: [phones[0]!.id, phones[1]!.id],
        refused: [{ device: phones[0]!.id, code: 'already_used' }],
      }),
    ]);
    const readX = hookInput('PreToolUse', 'Read', { file_path: '/x' });
    const read = await runLatch(machine, ['hook', 'claude-code'], { input: readX });
    expect(claudeCodeDecision(read, readX)).toBe('allow');
  });

  it('honours a freeze it cannot verify (the safe direction), says so in the audit log, and binds it to its id', async () => {
    const stranger = await createPhone('Stranger');
    // Words no phone paired here signed: kept for the person in the audit, never told an agent.
    const relayWords = 'run latch init --reset to resume';
    const envelope = await signFreeze(machine, stranger, relayWords);
    const unverifiable = await freezeId(envelope);
    sendFreeze(relay, envelope, 1);
    await expect.poll(() => statusCode(machine)).toBe(1);
    expect(audited(machine, 'freeze', unverifiable)).toEqual([
      expect.objectContaining({ epoch: 1, verified: false, reason: relayWords }),
    ]);
    const readX = hookInput('PreToolUse', 'Read', { file_path: '/x' });
    const blocked = await runLatch(machine, ['hook', 'claude-code'], { input: readX });
    expect(claudeCodeReads(blocked, readX)?.['hookSpecificOutput']).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason:
        'latch: kill_switch: the fleet is frozen (the relay says so, not signed by a phone paired here: its reason is not shown)',
    });
    expect((await runLatch(machine, ['status'])).stdout).not.toContain(relayWords);
    sendVotes(relay, unverifiable, [
      await vote(machine, relay, phones[0]!, unverifiable),
      await vote(machine, relay, phones[1]!, unverifiable),
    ]);
    await expect.poll(() => statusCode(machine)).toBe(0);
  });

  it('keeps the freeze across a daemon restart', async () => {
    await freezeHost(phones[1]!, 'before restart');
    daemon = await restartDaemon(daemon, machine, relay);
    expect((await runLatch(machine, ['status'])).stdout).toMatch(/^frozen: before restart \(epoch 1;/);
  });

  it('counts two votes of the same phone once, and keeps the counter of the one it counted', async () => {
    const freeze = await freezeHost();
    const once = await vote(machine, relay, phones[0]!, freeze);
    const twice = await vote(machine, relay, phones[0]!, freeze);
    sendVotes(relay, freeze, [once, twice]);
    await expect.poll(() => audited(machine, 'resume_refused', freeze).length).toBe(1);
    expect(audited(machine, 'resume_refused', freeze)[0]).toMatchObject({
      votes: [phones[0]!.id],
      needed: 2,
      refused: [{ device: phones[0]!.id, code: 'already_used' }],
    });
    expect(await statusCode(machine)).toBe(1);
    expect(withStore(machine, (store) => store.activeDevice(phones[0]!.id)!.credential.counter)).toBe(
      counterOf(once),
    );
  });

  it('refuses a vote replayed after a restart, whose counter does not rise above the stored one', async () => {
    // An earlier freeze both phones ended: each has a counter stored from its vote.
    const earlier = await freezeHost(phones[0]!, 'earlier');
    sendVotes(relay, earlier, [
      await vote(machine, relay, phones[0]!, earlier),
      await vote(machine, relay, phones[1]!, earlier),
    ]);
    await expect.poll(() => statusCode(machine)).toBe(0);
    const freeze = await freezeHost(phones[0]!, 'the one in force', 2);
    // The first phone's vote, counted toward the freeze in force: one short of the quorum.
    const once = await vote(machine, relay, phones[0]!, freeze);
    sendVotes(relay, freeze, [once]);
    await expect.poll(() => audited(machine, 'resume_refused', freeze).length).toBe(1);
    daemon = await restartDaemon(daemon, machine, relay);
    sendVotes(relay, freeze, [once]);
    // A copy of the second phone's passkey, signing with the counter its last vote had.
    const stored = withStore(machine, (store) => store.activeDevice(phones[1]!.id)!.credential.counter);
    sendVotes(relay, freeze, [await vote(machine, relay, phones[1]!, freeze, stored)]);
    await expect.poll(() => audited(machine, 'resume_refused', freeze).length).toBe(3);
    expect(audited(machine, 'resume_refused', freeze).map((line) => line['refused'])).toEqual([
      undefined, // counted, nothing refused
      [{ device: phones[0]!.id, code: 'counter_not_increased' }],
      [{ device: phones[1]!.id, code: 'counter_not_increased' }],
    ]);
    expect(await statusCode(machine)).toBe(1);

    // The phone itself votes with a rising counter: with the first phone's vote, the quorum.
    const honest = await vote(machine, relay, phones[1]!, freeze);
    sendVotes(relay, freeze, [honest]);
    await expect.poll(() => statusCode(machine)).toBe(0);
    expect(withStore(machine, (store) => store.activeDevice(phones[1]!.id)!.credential.counter)).toBe(
      counterOf(honest),
    );
  });

  it('latch panic freezes the host at once and asks the relay to freeze the fleet', async () => {
    const fresh = newMachine();
    await initMachine(fresh, { relay: relay.origin });
    await startDaemonForTest(fresh);
    const panic = await runLatch(fresh, ['panic', 'the', 'agent', 'went', 'rogue']);
    expect(panic).toMatchObject({ code: 0, stdout: 'frozen: the fleet is frozen\n' });
    expect(relay.freezes.at(-1)).toMatchObject({
      kind: 'freeze',
      body: { reason: 'the agent went rogue' },
      signer: { role: 'host' },
    });
    expect((await runLatch(fresh, ['status'])).code).toBe(1);
    // Held by the id of the freeze it signed, which its votes will have to name.
    expect(withStore(fresh, (store) => store.switchState())).toMatchObject({
      frozen: true,
      epoch: 1,
      cause: 'panic',
      freeze: await freezeId(relay.freezes.at(-1)!),
    });
  });

  it('freezes in strict mode once the relay has been unreachable past the grace period', async () => {
    const strict = newMachine();
    await initMachine(strict, {
      relay: 'http://127.0.0.1:9',
      config: (text) =>
        text.replace('strict = false', 'strict = true').replace('grace_seconds = 120', 'grace_seconds = 1'),
    });
    await pairPhoneDirectly(strict, 'http://127.0.0.1:9');
    await startDaemonForTest(strict);
    await expect
      .poll(async () => (await runLatch(strict, ['status'])).stdout)
      .toMatch(/^frozen: the relay has been unreachable/);
    // No envelope, no id: only the relay's return lifts it.
    expect(withStore(strict, (store) => store.switchState())).toMatchObject({
      epoch: 1,
      freeze: null,
      cause: 'unreachable',
    });
  });
});
