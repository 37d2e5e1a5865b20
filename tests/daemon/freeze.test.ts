import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateStore } from '../../daemon/state/stateStore.ts';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { resumeChallenge } from '../../shared/kill-switch/resumeChallenge.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { StandInRelay } from '../support/standInRelay.ts';
import {
  auditLines,
  hookInput,
  initMachine,
  newMachine,
  pairPhoneDirectly,
  runLatch,
  startDaemon,
  withStore,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';
import { startPairedDaemon } from '../support/pairedDaemon.ts';
import { isHeld } from '../support/processes.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { SqliteDatabase } from '../../daemon/state/sqlite.ts';

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

const fleetOf = (machine: LatchMachine): string =>
  /fleet = "([^"]+)"/.exec(readFileSync(machine.files.config, 'utf8'))![1]!;

/** A phone's signed freeze of this machine's fleet. */
function signFreeze(machine: LatchMachine, phone: TestPhone, reason = 'prod incident 412') {
  return signEnvelope(
    'freeze',
    { fleet: fleetOf(machine), reason },
    { role: 'device', id: phone.id },
    phone.deviceKeys.privateKey,
  );
}

/** The relay forwards a freeze, under whatever epoch it chooses to announce. */
function sendFreeze(relay: StandInRelay, envelope: FreezeEnvelope, epoch: number): void {
  relay.send({ v: PROTOCOL_VERSION, type: 'frozen', epoch, envelope, at: Date.now() });
}

/** A phone's vote to end the freeze with this id. */
async function vote(
  machine: LatchMachine,
  relay: StandInRelay,
  phone: TestPhone,
  freeze: string,
  counter?: number,
): Promise<ResumeVote> {
  const fleet = fleetOf(machine);
  const assertion = await phone.authenticator.assert({
    rpId: '127.0.0.1',
    origin: relay.origin,
    challenge: await resumeChallenge({ fleet, freeze }),
    ...(counter === undefined ? {} : { counter }),
  });
  return { v: PROTOCOL_VERSION, fleet, freeze, device: phone.id, assertion };
}

function sendVotes(relay: StandInRelay, freeze: string, votes: ResumeVote[]): void {
  relay.send({ v: PROTOCOL_VERSION, type: 'resumed', freeze, votes, at: Date.now() });
}

const statusCode = async (machine: LatchMachine) => (await runLatch(machine, ['status'])).code;

/** Resolves once the daemon has handled every frame sent so far (frames are handled in order). */
async function settled(machine: LatchMachine, relay: StandInRelay): Promise<void> {
  const seq = relay.send({
    v: PROTOCOL_VERSION,
    type: 'expired',
    requestId: 'no-such-request',
    at: Date.now(),
  });
  await expect
    .poll(() => withStore(machine, (store) => Number(store.meta('cursor') ?? 0)))
    .toBeGreaterThanOrEqual(seq);
}

/** Restarts the daemon and waits until it is connected to the relay again. */
async function restart(daemon: RunningDaemon, machine: LatchMachine, relay: StandInRelay) {
  const seen = relay.cursors.length;
  await daemon.stop();
  const restarted = await startDaemon(machine);
  await relay.waitFor(() => relay.cursors.length > seen && relay.connected > 0);
  return restarted;
}

/** The audit lines of one event, optionally about one freeze. */
const audited = (machine: LatchMachine, event: string, freeze?: string) =>
  auditLines(machine).filter(
    (line) => line['event'] === event && (freeze === undefined || line['freeze'] === freeze),
  );

/** The WebAuthn sign counter an assertion carries (authenticatorData bytes 33–36). */
const counterOf = (vote: ResumeVote) =>
  new DataView(fromBase64url(vote.assertion.authenticatorData).buffer).getUint32(33);

const processState = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0];

describe('the kill switch on the host', () => {
  let relay: StandInRelay;
  let machine: LatchMachine;
  let daemon: RunningDaemon;
  let phones: TestPhone[];
  /** The freeze of the first test, which the next ones vote on. */
  let first: string;

  beforeAll(async () => {
    ({ relay, machine, daemon, phones } = await startPairedDaemon({ quorum: 2, policy: POLICY, phones: 2 }));
  });

  afterAll(async () => {
    await daemon.stop();
    await relay.stop();
  });

  it('blocks the next call with kill_switch, stops what latch exec started, and makes status exit 1', async () => {
    const exec = spawn(process.execPath, [LATCH_BIN, 'exec', '--', 'sleep', '1000'], {
      env: machine.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

    const envelope = await signFreeze(machine, phones[0]!);
    first = await freezeId(envelope);
    sendFreeze(relay, envelope, 1);

    // Stopped (T), or frozen in latch exec's cgroup where the machine gives it one.
    await expect.poll(() => isHeld(sleeper), { timeout: 5000 }).toBe(true);
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
    // A stopped process ignores SIGTERM until continued: end both for good.
    process.kill(sleeper, 'SIGKILL');
    exec.kill('SIGKILL');
    // Its polls wait up to 10 s for latch exec to start and 5 s for the stop.
  });

  it('stays frozen on votes it cannot verify, or on too few', async () => {
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
    const other = await freezeId(await signFreeze(machine, phones[0]!, 'never sent'));
    sendVotes(relay, first, [
      await vote(machine, relay, phones[0]!, other),
      await vote(machine, relay, phones[1]!, other),
    ]);
    await expect.poll(() => audited(machine, 'resume_refused', first).length).toBe(2);
    expect(audited(machine, 'resume_refused', first)[1]).toMatchObject({
      refused: [
        { device: phones[0]!.id, code: 'stale_freeze' },
        { device: phones[1]!.id, code: 'stale_freeze' },
      ],
    });
    expect(await statusCode(machine)).toBe(1);
  });

  it('resumes on its quorum of verified votes from distinct phones, and calls pass again', async () => {
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
    const read = await runLatch(machine, ['hook', 'claude-code'], {
      input: hookInput('PreToolUse', 'Read', { file_path: '/x' }),
    });
    expect(JSON.parse(read.stdout).hookSpecificOutput.permissionDecision).toBe('allow');
  });

  it('honours a freeze it cannot verify (the safe direction), says so in the audit log, and binds it to its id', async () => {
    const stranger = await createPhone('Stranger');
    const envelope = await signFreeze(machine, stranger, 'unverifiable');
    const unverifiable = await freezeId(envelope);
    sendFreeze(relay, envelope, 2);
    await expect.poll(() => statusCode(machine)).toBe(1);
    expect(audited(machine, 'freeze', unverifiable)).toEqual([
      expect.objectContaining({ epoch: 2, verified: false }),
    ]);
    sendVotes(relay, unverifiable, [
      await vote(machine, relay, phones[0]!, unverifiable),
      await vote(machine, relay, phones[1]!, unverifiable),
    ]);
    await expect.poll(() => statusCode(machine)).toBe(0);
  });

  it('keeps the freeze across a daemon restart', async () => {
    sendFreeze(relay, await signFreeze(machine, phones[1]!, 'before restart'), 3);
    await expect.poll(() => statusCode(machine)).toBe(1);
    daemon = await restart(daemon, machine, relay);
    expect((await runLatch(machine, ['status'])).stdout).toMatch(/^frozen: before restart \(epoch 3;/);
  });

  /** The first phone's vote the daemon counted toward the freeze in force. */
  let once: ResumeVote;

  it('counts two votes of the same phone once, and keeps the counter of the one it counted', async () => {
    const freeze = withStore(machine, (store) => store.switchState().freeze)!;
    once = await vote(machine, relay, phones[0]!, freeze);
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
    const freeze = withStore(machine, (store) => store.switchState().freeze)!;
    daemon = await restart(daemon, machine, relay);
    sendVotes(relay, freeze, [once]);
    // A copy of the second phone's passkey, signing with the counter its last vote had.
    const stored = withStore(machine, (store) => store.activeDevice(phones[1]!.id)!.credential.counter);
    sendVotes(relay, freeze, [await vote(machine, relay, phones[1]!, freeze, stored)]);
    await expect.poll(() => audited(machine, 'resume_refused', freeze).length).toBe(3);
    expect(audited(machine, 'resume_refused', freeze).map((line) => line['refused'])).toEqual([
      [{ device: phones[0]!.id, code: 'already_used' }],
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
    const freshDaemon = await startDaemon(fresh);
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
    // No envelope, no id: only the relay's return lifts it.
    expect(withStore(strict, (store) => store.switchState())).toMatchObject({
      epoch: 1,
      freeze: null,
      cause: 'unreachable',
    });
    await strictDaemon.stop();
  });
});

describe('a relay that replays what ended', () => {
  let relay: StandInRelay;
  let machine: LatchMachine;
  let daemon: RunningDaemon;
  let phone: TestPhone;
  /** The first freeze, and the votes that honestly ended it. */
  let first: { envelope: FreezeEnvelope; id: string; votes: ResumeVote[] };

  beforeAll(async () => {
    const paired = await startPairedDaemon({ quorum: 1, policy: POLICY });
    ({ relay, machine, daemon } = paired);
    [phone] = paired.phones;
  });

  afterAll(async () => {
    await daemon.stop();
    await relay.stop();
  });

  /** Ends the freeze in force with a fresh vote, as the phone would, and tells the relay so. */
  async function resumeHonestly(freeze: string): Promise<void> {
    sendVotes(relay, freeze, [await vote(machine, relay, phone, freeze)]);
    await expect.poll(() => statusCode(machine)).toBe(0);
    relay.state = { ...relay.state, frozen: false, freeze: undefined, votes: [] };
  }

  it('ends a freeze on the phone’s vote: the votes a lying relay will replay', async () => {
    const envelope = await signFreeze(machine, phone, 'first incident');
    const id = await freezeId(envelope);
    sendFreeze(relay, envelope, 1);
    await expect.poll(() => statusCode(machine)).toBe(1);
    first = { envelope, id, votes: [await vote(machine, relay, phone, id)] };
    sendVotes(relay, id, first.votes);
    await expect.poll(() => statusCode(machine)).toBe(0);
  });

  it('after latch panic, the first freeze’s votes lift nothing, however the relay labels them', async () => {
    const panic = await runLatch(machine, ['panic', 'second', 'incident']);
    expect(panic.code).toBe(0);
    const panicked = await freezeId(relay.freezes.at(-1)!);
    expect(withStore(machine, (store) => store.switchState())).toMatchObject({
      frozen: true,
      epoch: 2,
      freeze: panicked,
    });

    // As they were: the votes of a freeze that ended, skipped without a word.
    sendVotes(relay, first.id, first.votes);
    // Under the panic's id, and then each vote relabelled with it too.
    sendVotes(relay, panicked, first.votes);
    sendVotes(
      relay,
      panicked,
      first.votes.map((cast) => ({ ...cast, freeze: panicked })),
    );
    await expect.poll(() => audited(machine, 'resume_refused', panicked).length).toBe(2);
    expect(audited(machine, 'resume_refused', panicked).map((line) => line['refused'])).toEqual([
      [{ device: phone.id, code: 'stale_freeze' }],
      [{ device: phone.id, code: 'challenge_mismatch' }],
    ]);
    expect(await statusCode(machine)).toBe(1);
    expect(audited(machine, 'resume', first.id)).toHaveLength(1);

    await resumeHonestly(panicked);
  });

  it('a phone’s new freeze, relabelled with the first one’s epoch: the first votes lift nothing, its own do', async () => {
    const envelope = await signFreeze(machine, phone, 'third incident');
    const second = await freezeId(envelope);
    sendFreeze(relay, envelope, 1);
    await expect.poll(() => statusCode(machine)).toBe(1);
    sendVotes(relay, first.id, first.votes);
    sendVotes(relay, second, first.votes);
    await expect.poll(() => audited(machine, 'resume_refused', second).length).toBe(1);
    expect(audited(machine, 'resume_refused', second)[0]).toMatchObject({
      refused: [{ device: phone.id, code: 'stale_freeze' }],
    });
    expect(await statusCode(machine)).toBe(1);

    await resumeHonestly(second);
    expect(audited(machine, 'resume', second)).toHaveLength(1);
  });

  it('ignores a freeze that ended here when the relay sends it again, and says so once; a new unverifiable freeze is honoured', async () => {
    sendFreeze(relay, first.envelope, 7);
    sendFreeze(relay, first.envelope, 8);
    // And in the state a reconnecting daemon gets first.
    relay.state = { ...relay.state, frozen: true, freeze: first.envelope };
    await relay.reconnect();
    await settled(machine, relay);
    expect(audited(machine, 'freeze_replay_ignored', first.id)).toHaveLength(1);
    expect(await statusCode(machine)).toBe(0);
    expect(audited(machine, 'freeze', first.id)).toHaveLength(1);

    const stranger = await createPhone('Stranger');
    const unverifiable = await signFreeze(machine, stranger, 'unverifiable');
    sendFreeze(relay, unverifiable, 9);
    await expect.poll(() => statusCode(machine)).toBe(1);
    const id = await freezeId(unverifiable);
    expect(audited(machine, 'freeze', id)).toEqual([expect.objectContaining({ verified: false })]);
    await resumeHonestly(id);
    // The relay's state still holds the first freeze: a reconnect does not bring it back.
    relay.state = { ...relay.state, frozen: true, freeze: first.envelope };
    await relay.reconnect();
    await settled(machine, relay);
    expect(await statusCode(machine)).toBe(0);
    expect(audited(machine, 'freeze_replay_ignored', first.id)).toHaveLength(1);
    relay.state = { ...relay.state, frozen: false, freeze: undefined };
  });

  it('does not let a freeze from before its connection replace the one the relay’s state holds', async () => {
    const current = await signFreeze(machine, phone, 'in force');
    const currentId = await freezeId(current);
    relay.state = { ...relay.state, frozen: true, epoch: 12, freeze: current };
    await relay.reconnect();
    await expect.poll(() => statusCode(machine)).toBe(1);

    // The log the relay replays after its state: a freeze this host never saw, ended by its votes.
    const older = await signFreeze(machine, phone, 'long over');
    const olderId = await freezeId(older);
    relay.send({ v: PROTOCOL_VERSION, type: 'frozen', epoch: 10, envelope: older, at: Date.now() }, 1);
    relay.send(
      {
        v: PROTOCOL_VERSION,
        type: 'resumed',
        freeze: olderId,
        votes: [await vote(machine, relay, phone, olderId)],
        at: Date.now(),
      },
      2,
    );
    await settled(machine, relay);
    expect(audited(machine, 'resume_refused', currentId)).toEqual([
      expect.objectContaining({ refused: [{ device: phone.id, code: 'stale_freeze' }] }),
    ]);
    expect(withStore(machine, (store) => store.switchState())).toMatchObject({
      frozen: true,
      freeze: currentId,
    });
    expect(audited(machine, 'freeze', olderId)).toHaveLength(0);

    await resumeHonestly(currentId);
  });

  it('freezes under no id on a relay state without its envelope, which only a signed freeze can replace', async () => {
    relay.state = { ...relay.state, frozen: true, reason: 'no envelope', freeze: undefined };
    await relay.reconnect();
    await expect.poll(() => statusCode(machine)).toBe(1);
    expect(audited(machine, 'freeze').at(-1)).toMatchObject({
      freeze: null,
      verified: false,
      via: 'relay state',
      why: expect.stringMatching(/no vote can end this until a signed freeze arrives/),
    });
    const stray = await freezeId(await signFreeze(machine, phone, 'never sent'));
    sendVotes(relay, stray, [await vote(machine, relay, phone, stray)]);
    await expect.poll(() => audited(machine, 'resume_refused', stray).length).toBe(1);
    expect(await statusCode(machine)).toBe(1);

    const signed = await signFreeze(machine, phone, 'signed at last');
    const signedId = await freezeId(signed);
    sendFreeze(relay, signed, 13);
    await expect.poll(() => audited(machine, 'freeze', signedId).length).toBe(1);
    relay.state = { ...relay.state, reason: undefined };
    await resumeHonestly(signedId);
  });

  it('latch panic with the relay out of reach: exits 1, the host stays frozen, and the fleet is told once the relay is back', async () => {
    relay.failWith = 503;
    const panic = await runLatch(machine, ['panic', 'relay', 'down']);
    expect(panic.code).toBe(1);
    expect(panic.stdout).toMatch(/^frozen: this host is frozen, but the fleet was not told/);
    expect(await statusCode(machine)).toBe(1);
    const untold = withStore(machine, (store) => store.switchState().freeze);
    expect(audited(machine, 'fleet_not_told', untold!)).toHaveLength(1);

    const told = relay.freezes.length;
    relay.failWith = undefined;
    await relay.reconnect();
    await relay.waitFor(() => relay.freezes.length > told);
    const fresh = relay.freezes.at(-1)!;
    expect(fresh).toMatchObject({ body: { reason: 'relay down' }, signer: { role: 'host' } });
    // A fresh freeze, held here under its own id, in place of the untold one: the phones can end it.
    const freshId = await freezeId(fresh);
    expect(freshId).not.toBe(untold);
    await expect.poll(() => withStore(machine, (store) => store.switchState().freeze)).toBe(freshId);
    await resumeHonestly(freshId);
  });

  it('latch panic without a daemon and without the relay: exits 1, and the daemon tells the fleet when it starts', async () => {
    await daemon.stop();
    relay.failWith = 503;
    const panic = await runLatch(machine, ['panic', 'nobody', 'home']);
    expect(panic.code).toBe(1);
    expect(panic.stdout).toMatch(/the fleet was not told.*The daemon tells it once it runs/);
    expect(withStore(machine, (store) => store.switchState())).toMatchObject({
      frozen: true,
      cause: 'panic',
    });

    const told = relay.freezes.length;
    relay.failWith = undefined;
    daemon = await startDaemon(machine);
    await relay.waitFor(() => relay.freezes.length > told);
    expect(relay.freezes.at(-1)).toMatchObject({ body: { reason: 'nobody home' } });
    expect(await statusCode(machine)).toBe(1);
  });
});

describe('a state.db from before freeze ids', () => {
  it('opens with its switch as it was: frozen under no id, the epoch kept, and takes new freezes by id', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'latch-state-')), 'state.db');
    const old = new SqliteDatabase(path);
    old.exec(`
      CREATE TABLE switch (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        frozen INTEGER NOT NULL,
        epoch INTEGER NOT NULL,
        reason TEXT,
        cause TEXT
      );
      INSERT INTO switch VALUES (1, 1, 4, 'before the upgrade', 'relay');
    `);
    old.close();

    for (const _opening of [1, 2]) {
      const store = new StateStore(path);
      expect(store.switchState()).toEqual({
        frozen: true,
        epoch: 4,
        freeze: null,
        reason: 'before the upgrade',
        cause: 'relay',
      });
      store.close();
    }
    const store = new StateStore(path);
    expect(store.applyFreeze({ id: 'a-freeze', reason: 'again', cause: 'relay' }, Date.now())).toMatchObject({
      epoch: 5,
      freeze: 'a-freeze',
    });
    store.close();
  });
});
