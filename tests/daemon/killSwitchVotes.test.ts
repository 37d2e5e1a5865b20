import { describe, expect, it } from 'vitest';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { UNVERIFIED_FREEZE_REASON } from '../../daemon/kill-switch/killSwitch.ts';
import { inProcessKillSwitchForEachTest, otherKey } from '../support/inProcessKillSwitch.ts';

const rig = inProcessKillSwitchForEachTest();

describe('votes to resume, counted on the host', () => {
  it('resume at the quorum, store the passkey’s new counter, and tell the listeners', async () => {
    const id = await rig.frozenBy(await rig.phoneFreeze('incident'));
    await rig.killSwitch.onResumed(id, [await rig.vote(id)]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: false, epoch: 1 });
    expect(rig.changes.at(-1)).toEqual(rig.killSwitch.state);
    expect(rig.store.activeDevice(rig.fleet.phone.id)?.credential.counter).toBeGreaterThan(
      rig.fleet.device.credential.counter,
    );
    expect(rig.auditEvents().at(-1)).toMatchObject({
      event: 'resume',
      epoch: 1,
      freeze: id,
      votes: [rig.fleet.phone.id],
      needed: 1,
    });
    expect(rig.auditEvents().at(-1)).not.toHaveProperty('refused');
  });

  it('leave in force a freeze that came while they were checked, and say so', async () => {
    const id = await rig.frozenBy(await rig.phoneFreeze('incident'));
    const counting = rig.killSwitch.onResumed(id, [await rig.vote(id)]);
    await rig.killSwitch.applyFreeze(await rig.phoneFreeze('panic meanwhile'), 'panic');
    await counting;
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, reason: 'panic meanwhile' });
    expect(rig.changes.every((state) => state.frozen)).toBe(true);
    expect(rig.auditEvents()).toContainEqual(
      expect.objectContaining({
        event: 'resume_refused',
        freeze: id,
        votes: [rig.fleet.phone.id],
        why: 'a new freeze took its place while the votes were checked',
      }),
    );
  });

  it('count the same phone once, however often it votes', async () => {
    rig.quorum = 2;
    const id = await rig.frozenBy(await rig.phoneFreeze('incident'));
    await rig.killSwitch.onResumed(id, [await rig.vote(id), await rig.vote(id)]);
    await rig.killSwitch.onResumed(id, [await rig.vote(id)]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: id });
    expect(rig.auditEvents().at(-1)).toMatchObject({
      event: 'resume_refused',
      votes: [rig.fleet.phone.id],
      needed: 2,
      refused: [{ device: rig.fleet.phone.id, code: 'already_used' }],
    });
    expect(rig.auditEvents().at(-1)).not.toHaveProperty('why');
  });

  it('refuse a vote whose passkey assertion was already used', async () => {
    rig.quorum = 2;
    const id = await rig.frozenBy(await rig.phoneFreeze('incident'));
    const once = await rig.vote(id);
    await rig.killSwitch.onResumed(id, [once]);
    await rig.killSwitch.onResumed(id, [once]);
    expect(rig.auditEvents().at(-1)).toMatchObject({
      event: 'resume_refused',
      refused: [{ device: rig.fleet.phone.id, code: 'counter_not_increased' }],
    });
  });

  it('refuse a vote from a phone not paired here, by the verifier’s code', async () => {
    const id = await rig.frozenBy(await rig.phoneFreeze('incident'));
    await rig.killSwitch.onResumed(id, [{ ...(await rig.vote(id)), device: 'stranger' }]);
    expect(rig.killSwitch.state.frozen).toBe(true);
    expect(rig.auditEvents().at(-1)).toMatchObject({
      event: 'resume_refused',
      votes: [],
      refused: [{ device: 'stranger', code: 'unknown_credential' }],
    });
  });

  it('do nothing when the host is not frozen', async () => {
    const id = await freezeId(await rig.phoneFreeze('never applied'));
    await rig.killSwitch.onResumed(id, [await rig.vote(id)]);
    expect(rig.killSwitch.state.frozen).toBe(false);
    expect(rig.auditEvents).toThrow(/ENOENT/);
  });

  it('cannot end a freeze without an id (strict mode), and say why', async () => {
    rig.killSwitch.freezeUnreachable('the relay is out of reach');
    const id = await freezeId(await rig.phoneFreeze('some freeze'));
    await rig.killSwitch.onResumed(id, [await rig.vote(id)]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: null, cause: 'unreachable' });
    expect(rig.auditEvents()).toEqual([
      expect.objectContaining({ event: 'freeze', cause: 'unreachable', epoch: 1, verified: true }),
      expect.objectContaining({
        event: 'resume_refused',
        epoch: 1,
        freeze: id,
        why: expect.stringContaining('no vote can end it'),
      }),
    ]);
  });
});

describe('the relay’s view of the fleet', () => {
  it('freezes the host by the envelope it carries', async () => {
    const envelope = await rig.phoneFreeze('from the relay');
    await rig.killSwitch.onRelayState(
      rig.relayState({ frozen: true, freeze: envelope, reason: 'from the relay' }),
    );
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: await freezeId(envelope) });
    expect(rig.killSwitch.state.cause).toBe('relay');
    expect(rig.auditEvents()).toEqual([
      expect.objectContaining({ event: 'freeze', cause: 'relay', via: 'relay state', verified: true }),
    ]);
  });

  it('freezes the host under no id when it says frozen without the envelope', async () => {
    await rig.killSwitch.onRelayState(rig.relayState({ frozen: true, reason: 'no envelope' }));
    // The relay's words stay in the audit; what agents are told of the freeze is not them.
    expect(rig.killSwitch.state).toMatchObject({
      frozen: true,
      freeze: null,
      reason: UNVERIFIED_FREEZE_REASON,
      cause: 'relay',
    });
    expect(rig.auditEvents()).toEqual([
      expect.objectContaining({
        event: 'freeze',
        cause: 'relay',
        freeze: null,
        verified: false,
        via: 'relay state',
        reason: 'no envelope',
        why: 'the relay says frozen without the signed freeze: no vote can end this until a signed freeze arrives',
      }),
    ]);
  });

  it('takes over a freeze the host made because the relay was unreachable', async () => {
    rig.killSwitch.freezeUnreachable('out of reach');
    await rig.killSwitch.onRelayState(rig.relayState({ frozen: true }));
    expect(rig.killSwitch.state).toMatchObject({
      frozen: true,
      epoch: 2,
      reason: UNVERIFIED_FREEZE_REASON,
      cause: 'relay',
    });
  });

  it('does not replace a freeze in force with one it cannot show', async () => {
    const id = await rig.frozenBy(await rig.phoneFreeze('signed'));
    await rig.killSwitch.onRelayState(rig.relayState({ frozen: true }));
    expect(rig.killSwitch.state).toMatchObject({ freeze: id, reason: 'signed' });
    expect(rig.auditEvents()).toHaveLength(1);
  });

  it('lifts only a freeze the host made because the relay was unreachable', async () => {
    const id = await rig.frozenBy(await rig.phoneFreeze('signed'));
    await rig.killSwitch.onRelayState(rig.relayState({ frozen: false }));
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: id });

    await rig.killSwitch.onResumed(id, [await rig.vote(id)]);
    rig.killSwitch.freezeUnreachable('out of reach');
    rig.killSwitch.freezeUnreachable('still out of reach');
    expect(rig.killSwitch.state).toMatchObject({
      frozen: true,
      reason: 'out of reach',
      cause: 'unreachable',
    });
    await rig.killSwitch.onRelayState(rig.relayState({ frozen: false }));
    expect(rig.killSwitch.state.frozen).toBe(false);
    expect(rig.auditEvents().at(-1)).toMatchObject({
      event: 'resume',
      via: 'relay reachable again (strict mode)',
    });
  });
});

describe('freezes the relay sends out of order', () => {
  it('keep in force a freeze signed after the one the relay sends next, whose captured votes then lift nothing', async () => {
    const older = await rig.phoneFreeze('an incident an hour ago', { signedAt: Date.now() - 3_600_000 });
    const olderId = await freezeId(older);
    const capturedVote = await rig.vote(olderId);
    const newerId = await rig.frozenBy(await rig.phoneFreeze('the incident now'));
    await rig.killSwitch.applyFreeze(older, 'relay');
    await rig.killSwitch.onResumed(olderId, [capturedVote]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: newerId, reason: 'the incident now' });
    expect(rig.auditEvents()).toContainEqual(
      expect.objectContaining({ event: 'freeze_stale_ignored', freeze: olderId }),
    );
    await rig.killSwitch.onResumed(newerId, [await rig.vote(newerId)]);
    expect(rig.killSwitch.state.frozen).toBe(false);
    // Refused once, refused for good: the older freeze is a replay from now on.
    await rig.killSwitch.applyFreeze(older, 'relay');
    expect(rig.killSwitch.state.frozen).toBe(false);
  });

  it('let a freeze signed later take the place of the one in force, so that only its votes count', async () => {
    const olderId = await rig.frozenBy(await rig.phoneFreeze('first', { signedAt: Date.now() - 60_000 }));
    const staleVote = await rig.vote(olderId);
    const newerId = await rig.frozenBy(await rig.phoneFreeze('second'));
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: newerId });
    await rig.killSwitch.onResumed(olderId, [staleVote]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: newerId });
  });

  it('let this host’s own panic take the place of a freeze stamped later by a phone’s fast clock', async () => {
    await rig.frozenBy(await rig.phoneFreeze('phone clock ahead', { signedAt: Date.now() + 300_000 }));
    const panic = await rig.phoneFreeze('latch panic here');
    await rig.killSwitch.applyFreeze(panic, 'panic');
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: await freezeId(panic) });
  });

  it('never let a freeze this host cannot verify take the place of the one in force: its votes lift nothing', async () => {
    // The relay signs a freeze itself, dated far ahead, shows it to the phone, which votes on it,
    // and keeps it from this host until the host freezes for its own reasons.
    const madeUp = await rig.phoneFreeze('maintenance window', {
      key: await otherKey(),
      signedAt: Date.UTC(2199, 0, 1),
    });
    const madeUpId = await freezeId(madeUp);
    const collectedVote = await rig.vote(madeUpId);
    const panic = await rig.phoneFreeze('latch panic: real incident');
    await rig.killSwitch.applyFreeze(panic, 'panic');
    for (let sent = 0; sent < 5; sent++) await rig.killSwitch.applyFreeze(madeUp, 'relay');
    await rig.killSwitch.onResumed(madeUpId, [collectedVote]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: await freezeId(panic) });
    // Five times from the relay, audited once (the relay can send these at will).
    expect(rig.auditEvents().filter((line) => line['event'] === 'freeze_ignored')).toEqual([
      expect.objectContaining({
        freeze: madeUpId,
        why: expect.stringMatching(/^not signed by a phone paired here or by this host/),
      }),
    ]);
    expect(rig.auditEvents().map((line) => line['event'])).not.toContain('resume');
  });

  it('never let a phone’s freeze dated far ahead take the place of the one in force', async () => {
    // A real phone's panic, signed by a relay clock 9 minutes fast, withheld and voted on.
    const withheld = await rig.phoneFreeze('an earlier panic', { signedAt: Date.now() + 9 * 60_000 });
    const withheldId = await freezeId(withheld);
    const collectedVote = await rig.vote(withheldId);
    const inForce = await rig.frozenBy(await rig.phoneFreeze('the incident now'));
    await rig.killSwitch.applyFreeze(withheld, 'relay');
    await rig.killSwitch.onResumed(withheldId, [collectedVote]);
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: inForce });
    expect(rig.auditEvents()).toContainEqual(
      expect.objectContaining({
        event: 'freeze_ignored',
        freeze: withheldId,
        why: expect.stringMatching(/^dated more than 6 minutes ahead/),
      }),
    );
    // Within the skew allowed, a later freeze of a phone paired here still takes its place.
    const later = await rig.frozenBy(await rig.phoneFreeze('later', { signedAt: Date.now() + 4 * 60_000 }));
    expect(rig.killSwitch.state).toMatchObject({ frozen: true, freeze: later });
  });
});
