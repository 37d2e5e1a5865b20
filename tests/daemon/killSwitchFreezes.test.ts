import { describe, expect, it } from 'vitest';
import { StateStore } from '../../daemon/state/stateStore.ts';
import type { SwitchState } from '../../daemon/state/switchStore.ts';
import { UNVERIFIED_FREEZE_REASON } from '../../daemon/kill-switch/killSwitch.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { inProcessKillSwitchForEachTest, otherKey } from '../support/inProcessKillSwitch.ts';

const rig = inProcessKillSwitchForEachTest();

describe('a freeze on the host', () => {
  it('is in force at once, by its id, and audited as verified when a paired phone signed it', async () => {
    const envelope = await rig.phoneFreeze('prod incident');
    await rig.killSwitch.applyFreeze(envelope, 'relay', 'a frame');
    const id = await freezeId(envelope);
    expect(rig.killSwitch.state).toEqual({
      frozen: true,
      epoch: 1,
      freeze: id,
      reason: 'prod incident',
      cause: 'relay',
    });
    expect(rig.changes).toEqual([rig.killSwitch.state]);
    expect(rig.auditEvents()).toEqual([
      expect.objectContaining({
        event: 'freeze',
        cause: 'relay',
        epoch: 1,
        freeze: id,
        verified: true,
        signer: { role: 'device', id: rig.fleet.phone.id },
        reason: 'prod incident',
        via: 'a frame',
      }),
    ]);
  });

  it('tells a listener until it unsubscribes', async () => {
    const told: SwitchState[] = [];
    const unsubscribe = rig.killSwitch.onChange((state) => told.push(state));
    await rig.killSwitch.applyFreeze(await rig.phoneFreeze('first'), 'relay');
    unsubscribe();
    await rig.killSwitch.applyFreeze(await rig.phoneFreeze('second'), 'relay');
    expect(told).toEqual([expect.objectContaining({ reason: 'first' })]);
    expect(rig.changes).toHaveLength(2);
  });

  it('is audited as verified when this host signed it, as latch panic does', async () => {
    const envelope = await signEnvelope(
      'freeze',
      { fleet: rig.fleet.fleet, reason: 'panic' },
      { role: 'host', id: rig.fleet.host.id },
      rig.fleet.host.hostKeys.privateKey,
    );
    await rig.killSwitch.applyFreeze(envelope, 'panic');
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, cause: 'panic' });
    expect(rig.auditEvents()).toEqual([
      expect.objectContaining({ event: 'freeze', cause: 'panic', verified: true }),
    ]);
    expect(rig.auditEvents()[0]).not.toHaveProperty('via');
  });

  it('made by latch panic on the state while this daemon did not answer, is told to the listeners when first read, once (review rv2)', async () => {
    const envelope = await signEnvelope(
      'freeze',
      { fleet: rig.fleet.fleet, reason: 'panic from a terminal' },
      { role: 'host', id: rig.fleet.host.id },
      rig.fleet.host.hostKeys.privateKey,
    );
    const id = await freezeId(envelope);
    // The CLI's own connection to the same state.db, as `latch panic` opens it.
    const cli = new StateStore(rig.statePath);
    cli.applyFreeze(
      { id, reason: 'panic from a terminal', cause: 'panic', signedAt: Date.now() },
      Date.now(),
    );
    cli.close();
    expect(rig.changes).toEqual([]);

    // Read by the next call's decision, or the relay's echo of the freeze: told once.
    const held = rig.killSwitch.state;
    expect(held).toMatchObject({ frozen: true, freeze: id });
    expect(rig.changes).toEqual([held]);
    await rig.killSwitch.applyFreeze(envelope, 'relay', 'the relay echoes it');
    expect(rig.changes).toEqual([held]);
  });

  it.each([
    [
      'a signature that fails for the paired phone',
      async () => rig.phoneFreeze('x', { key: await otherKey() }),
    ],
    ['another fleet', () => rig.phoneFreeze('x', { fleet: 'another-fleet' })],
    [
      'another host, even with this host’s signature',
      () =>
        signEnvelope(
          'freeze',
          { fleet: rig.fleet.fleet, reason: 'x' },
          { role: 'host', id: 'another-host' },
          rig.fleet.host.hostKeys.privateKey,
        ),
    ],
    [
      'a phone not paired here',
      async () =>
        signEnvelope(
          'freeze',
          { fleet: rig.fleet.fleet, reason: 'x' },
          { role: 'device', id: 'stranger' },
          await otherKey(),
        ),
    ],
  ])('is honoured all the same, audited as not verified, from %s', async (_from, envelope) => {
    await rig.killSwitch.applyFreeze(await envelope(), 'relay');
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, reason: UNVERIFIED_FREEZE_REASON });
    expect(rig.auditEvents()).toEqual([
      expect.objectContaining({ event: 'freeze', verified: false, reason: 'x' }),
    ]);
  });

  it('keeps a panic made while an older freeze from the relay was being checked: that freeze and its votes end nothing', async () => {
    // A phone's freeze of an hour ago, which this host never saw, and a vote the relay kept for it.
    const old = await rig.phoneFreeze('an old freeze', { signedAt: Date.now() - 3_600_000 });
    const oldId = await freezeId(old);
    const oldVote = await rig.vote(oldId);
    const panic = await signEnvelope(
      'freeze',
      { fleet: rig.fleet.fleet, reason: 'latch panic here' },
      { role: 'host', id: rig.fleet.host.id },
      rig.fleet.host.hostKeys.privateKey,
    );
    // Not awaited in between: the panic lands while the relay's freeze is verified.
    await Promise.all([rig.killSwitch.applyFreeze(old, 'relay'), rig.killSwitch.applyFreeze(panic, 'panic')]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: await freezeId(panic) });
    expect(rig.auditEvents().at(-1)).toMatchObject({ event: 'freeze_stale_ignored', freeze: oldId });
    await rig.killSwitch.onResumed(oldId, [oldVote]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: await freezeId(panic) });
  });

  // Review Z: a freeze with no id (the relay's word, or one kept from before ids) had no order,
  // so any freeze took its place, and the votes that ended that one long ago then lifted it.
  it('held under no id, is replaced only by a freeze signed after it began here: an older one and its old votes end nothing', async () => {
    const old = await rig.phoneFreeze('an old freeze', { signedAt: Date.now() - 3_600_000 });
    const oldId = await freezeId(old);
    const oldVote = await rig.vote(oldId);
    await rig.killSwitch.onRelayState(rig.relayState({ frozen: true }));
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: null, cause: 'relay' });

    await rig.killSwitch.applyFreeze(old, 'relay');
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: null, cause: 'relay' });
    expect(rig.auditEvents().at(-1)).toMatchObject({ event: 'freeze_stale_ignored', freeze: oldId });
    await rig.killSwitch.onResumed(oldId, [oldVote]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: null });

    // A person freezing again now is the way out, as docs/kill-switch.md says.
    const again = await rig.frozenBy(await rig.phoneFreeze('freeze again'));
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: again });
    await rig.killSwitch.onResumed(again, [await rig.vote(again)]);
    expect(rig.killSwitch.state.frozen).toBe(false);
  });

  it('from the relay, unverified and dated ahead, orders nothing by its date: a person’s freeze takes its place and resumes (review R4)', async () => {
    const yearAhead = Date.now() + 365 * 24 * 3_600_000;
    const forged = await rig.frozenBy(
      await rig.phoneFreeze('forged', { key: await otherKey(), signedAt: yearAhead }),
    );
    expect(rig.auditEvents().at(-1)).toMatchObject({ event: 'freeze', freeze: forged, verified: false });
    const person = await rig.frozenBy(await rig.phoneFreeze('the person’s'));
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: person });
    await rig.killSwitch.onResumed(person, [await rig.vote(person)]);
    expect(rig.killSwitch.state.frozen).toBe(false);
  });

  it('from a paired phone whose clock runs a year ahead, is ordered from no later than this host’s clock allows', async () => {
    const ahead = await rig.frozenBy(
      await rig.phoneFreeze('ahead', { signedAt: Date.now() + 365 * 24 * 3_600_000 }),
    );
    expect(rig.store.freezeSignedAt(ahead)).toBeLessThanOrEqual(Date.now() + 6 * 60_000);
    // A freeze signed within the clock tolerance after it takes its place.
    const next = await rig.frozenBy(await rig.phoneFreeze('next', { signedAt: Date.now() + 6 * 60_000 }));
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: next });
  });

  it('held under no id since before the upgrade, is ordered from the upgrade', async () => {
    const old = await rig.phoneFreeze('an old freeze', { signedAt: Date.now() - 24 * 3_600_000 });
    // As an upgrade leaves a `latch panic` of before ids: migrateState fills frozen_at with its time.
    rig.store.db.exec(
      `UPDATE switch SET frozen = 1, freeze = NULL, reason = 'panic before', cause = 'panic', frozen_at = ${Date.now()} WHERE id = 1`,
    );
    await rig.killSwitch.applyFreeze(old, 'relay');
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: null, cause: 'panic' });
    await rig.killSwitch.onResumed(await freezeId(old), [await rig.vote(await freezeId(old))]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: null, cause: 'panic' });
  });

  it('is nothing new when the same freeze comes again', async () => {
    const envelope = await rig.phoneFreeze('once');
    await rig.killSwitch.applyFreeze(envelope, 'relay');
    await rig.killSwitch.applyFreeze(envelope, 'relay');
    expect(rig.killSwitch.state.epoch).toBe(1);
    expect(rig.auditEvents()).toHaveLength(1);
    expect(rig.changes).toHaveLength(1);
  });

  it('ends the freeze before it, which its votes can no longer end', async () => {
    const first = await rig.frozenBy(await rig.phoneFreeze('first'));
    const second = await rig.frozenBy(await rig.phoneFreeze('second'));
    expect(rig.killSwitch.state).toMatchObject({ epoch: 2, freeze: second });
    await rig.killSwitch.onResumed(first, [await rig.vote(first)]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: second });
    // Review R4: said, so that a person voting on the freeze before learns why nothing ended.
    expect(rig.auditEvents().map((line) => line['event'])).toEqual(['freeze', 'freeze', 'resume_refused']);
    expect(rig.auditEvents().at(-1)).toMatchObject({
      freeze: first,
      why: expect.stringContaining('ended here'),
    });
    // Forwarded under the freeze in force, a vote for the one before still counts for nothing.
    await rig.killSwitch.onResumed(second, [await rig.vote(first)]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: second });
    expect(rig.auditEvents().at(-1)).toMatchObject({
      event: 'resume_refused',
      refused: [{ device: rig.fleet.phone.id, code: 'stale_freeze' }],
    });
  });

  it('that ended here is a replay: ignored, and audited once', async () => {
    const envelope = await rig.phoneFreeze('ended');
    const id = await rig.frozenBy(envelope);
    await rig.killSwitch.onResumed(id, [await rig.vote(id)]);
    await rig.killSwitch.applyFreeze(envelope, 'relay', 'relay state');
    await rig.killSwitch.applyFreeze(envelope, 'relay', 'relay state');
    expect(rig.killSwitch.state.frozen).toBe(false);
    expect(rig.auditEvents().slice(2)).toEqual([
      expect.objectContaining({
        event: 'freeze_replay_ignored',
        freeze: id,
        why: 'this freeze ended here already',
        signer: { role: 'device', id: rig.fleet.phone.id },
        via: 'relay state',
      }),
    ]);
  });
});
