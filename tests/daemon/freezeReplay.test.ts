import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import type { StandInRelay } from '../support/standInRelay.ts';
import {
  auditLines,
  runLatch,
  startDaemon,
  withStore,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';
import {
  KILL_SWITCH_POLICY,
  audited,
  fleetOf,
  sendFreeze,
  sendVotes,
  signFreeze,
  statusCode,
  vote,
} from '../support/killSwitchRelay.ts';
import { framesHandled, startPairedDaemon } from '../support/pairedDaemon.ts';

describe('a relay that replays what ended', () => {
  let relay: StandInRelay;
  let machine: LatchMachine;
  let daemon: RunningDaemon;
  let phone: TestPhone;

  // A host of its own for each test, so that each runs alone (-t) and a failure stays its own.
  beforeEach(async () => {
    const paired = await startPairedDaemon({ quorum: 1, policy: KILL_SWITCH_POLICY });
    ({ relay, machine, daemon } = paired);
    [phone] = paired.phones;
  });

  afterEach(async () => {
    await daemon.stop();
    await relay.stop();
  });

  /** Ends the freeze in force with a fresh vote, as the phone would, and tells the relay so. */
  async function resumeHonestly(freeze: string): Promise<void> {
    sendVotes(relay, freeze, [await vote(machine, relay, phone, freeze)]);
    await expect.poll(() => statusCode(machine)).toBe(0);
    relay.state = { ...relay.state, frozen: false, freeze: undefined, votes: [] };
  }

  /** A freeze the phone's vote ended: what a lying relay will replay. */
  async function endedFreeze(): Promise<{ envelope: FreezeEnvelope; id: string; votes: ResumeVote[] }> {
    const envelope = await signFreeze(machine, phone, 'first incident');
    const id = await freezeId(envelope);
    sendFreeze(relay, envelope, 1);
    await expect.poll(() => statusCode(machine)).toBe(1);
    const votes = [await vote(machine, relay, phone, id)];
    sendVotes(relay, id, votes);
    await expect.poll(() => statusCode(machine)).toBe(0);
    return { envelope, id, votes };
  }

  it('ends a freeze on the phone’s vote: the votes a lying relay will replay', async () => {
    const first = await endedFreeze();
    expect(audited(machine, 'resume', first.id)).toHaveLength(1);
  });

  it('after latch panic, the first freeze’s votes lift nothing, however the relay labels them', async () => {
    const first = await endedFreeze();
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
    const first = await endedFreeze();
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

  it('keeps a freeze in force whose signing time it never recorded: an older one with its old vote lifts nothing', async () => {
    const older = await signFreeze(machine, phone, 'older incident');
    const olderId = await freezeId(older);
    const olderVote = await vote(machine, relay, phone, olderId);
    const inForce = await signFreeze(machine, phone, 'the one in force');
    const inForceId = await freezeId(inForce);
    sendFreeze(relay, inForce, 1);
    await expect.poll(() => statusCode(machine)).toBe(1);
    // As a version before signing times were kept left it.
    withStore(machine, (store) =>
      store.db.prepare('UPDATE freezes SET signed_at = NULL WHERE id = ?').run(inForceId),
    );
    sendFreeze(relay, older, 2);
    sendVotes(relay, olderId, [olderVote]);
    await framesHandled(machine, relay);
    expect(audited(machine, 'freeze_ignored')).toContainEqual(
      expect.objectContaining({ freeze: olderId, why: expect.stringMatching(/no signing time recorded/) }),
    );
    expect(withStore(machine, (store) => store.switchState().freeze)).toBe(inForceId);
    expect(await statusCode(machine)).toBe(1);
    await resumeHonestly(inForceId);
  });

  it('audits what a relay sends at will once a minute: resumes that count no vote, made-up revokes', async () => {
    const envelope = await signFreeze(machine, phone, 'flooded');
    const id = await freezeId(envelope);
    sendFreeze(relay, envelope, 1);
    await expect.poll(() => statusCode(machine)).toBe(1);
    const linesBefore = auditLines(machine).length;
    const forger = await createPhone('Relay’s own key');
    for (let n = 0; n < 50; n++) {
      sendVotes(relay, id, []);
      relay.send({
        v: PROTOCOL_VERSION,
        type: 'grant_revoked',
        envelope: await signEnvelope(
          'revoke-grant',
          { fleet: fleetOf(machine), host: 'some-host', requestId: `made-up-${n}` },
          { role: 'device', id: forger.id },
          forger.deviceKeys.privateKey,
        ),
        at: Date.now(),
      });
    }
    await framesHandled(machine, relay);
    const added = auditLines(machine).slice(linesBefore);
    expect(added.filter((line) => line['event'] === 'resume_refused')).toHaveLength(1);
    expect(added.filter((line) => line['event'] === 'grant_revoked')).toHaveLength(1);
    await resumeHonestly(id);
  });

  it('ignores a freeze that ended here when the relay sends it again, and says so once; a new unverifiable freeze is honoured', async () => {
    const first = await endedFreeze();
    sendFreeze(relay, first.envelope, 7);
    sendFreeze(relay, first.envelope, 8);
    // And in the state a reconnecting daemon gets first.
    relay.state = { ...relay.state, frozen: true, freeze: first.envelope };
    await relay.reconnect();
    await framesHandled(machine, relay);
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
    await framesHandled(machine, relay);
    expect(await statusCode(machine)).toBe(0);
    expect(audited(machine, 'freeze_replay_ignored', first.id)).toHaveLength(1);
  });

  it('knows an ended freeze whose signature the relay flipped to its other valid form, (r, n − s)', async () => {
    const first = await endedFreeze();
    const flipped = { ...first.envelope, sig: otherFormOf(first.envelope.sig) };
    expect(flipped.sig).not.toBe(first.envelope.sig);
    sendFreeze(relay, flipped, 7);
    await framesHandled(machine, relay);
    expect(await statusCode(machine)).toBe(0);
    expect(audited(machine, 'freeze_replay_ignored', first.id)).toHaveLength(1);
  });

  it('does not let a freeze from before its connection replace the one the relay’s state holds', async () => {
    const current = await signFreeze(machine, phone, 'in force');
    const currentId = await freezeId(current);
    // The relay's log has run on: the state it sends sums up frames 1 and 2.
    for (let frame = 1; frame <= 2; frame++) await framesHandled(machine, relay);
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
    await framesHandled(machine, relay);
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

  it.each([
    ['for another fleet', (state: FleetState) => ({ ...state, fleet: 'fleet-elsewhere' })],
    ['not frozen', (state: FleetState) => ({ ...state, frozen: false, freeze: undefined })],
    ['with an older freeze in force', (state: FleetState) => ({ ...state, freeze: relay.freezes[0] })],
  ])(
    'latch panic answered with a state %s: the fleet counts as not told, and is told again',
    async (_what, lie) => {
      // An earlier freeze, for the lie that shows it in force, ended so that the panic is news.
      if (relay.freezes.length === 0) {
        expect((await runLatch(machine, ['panic', 'first'])).code).toBe(0);
        await resumeHonestly(withStore(machine, (store) => store.switchState().freeze)!);
      }
      relay.answerFreeze = lie;
      const panic = await runLatch(machine, ['panic', 'lied', 'to']);
      expect(panic.code).toBe(1);
      expect(panic.stdout).toMatch(/^frozen: this host is frozen, but the fleet was not told/);
      const untold = withStore(machine, (store) => store.switchState().freeze);
      expect(audited(machine, 'fleet_not_told', untold!)).toMatchObject([
        {
          error: expect.stringMatching(
            /^the relay answered (for another fleet|without this freeze in force)/,
          ),
        },
      ]);

      const told = relay.freezes.length;
      relay.answerFreeze = undefined;
      await relay.reconnect();
      await relay.waitFor(() => relay.freezes.length > told);
      expect(relay.freezes.at(-1)).toMatchObject({ body: { reason: 'lied to' } });
    },
  );

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

/** P-256's group order: an ECDSA signature (r, s) verifies as (r, n − s) too. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** The same signature in its other form, which verifies all the same. */
function otherFormOf(signature: string): string {
  const bytes = fromBase64url(signature);
  const s = BigInt(`0x${Buffer.from(bytes.subarray(32)).toString('hex')}`);
  const flipped = Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex');
  return toBase64url(new Uint8Array([...bytes.subarray(0, 32), ...flipped]));
}
