import { abortAllDurableObjects, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Fleet } from '../../relay/fleet/Fleet.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { resumeChallenge } from '../../shared/kill-switch/resumeChallenge.ts';
import { verifyResumeVote } from '../../shared/kill-switch/verifyResumeVote.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { createHost, TEST_RP_ID, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import {
  bearer,
  call,
  DaemonSocket,
  fleetStub,
  newFleet,
  ORIGIN,
  pairPhone,
  revokeAs,
  type TestFleet,
} from './harness.ts';

/** Freezes the fleet; resolves with the relay's answer and the id of the freeze it put in force. */
async function freezeBy(test: TestFleet, phone: TestPhone, reason = 'prod incident 412') {
  const envelope = await signEnvelope(
    'freeze',
    { fleet: test.fleet, reason },
    { role: 'device', id: phone.id },
    phone.deviceKeys.privateKey,
  );
  const reply = await call<FleetState>('POST', `/v1/fleets/${test.fleet}/freeze`, { json: envelope });
  return { ...reply, envelope, id: await freezeId(envelope) };
}

/** `phone`'s vote to end `freeze`; `device` relabels it, `counter` sets what its passkey reports. */
async function ballot(
  test: TestFleet,
  phone: TestPhone,
  freeze: string,
  device = phone.id,
  counter?: number,
): Promise<ResumeVote> {
  const assertion = await phone.authenticator.assert({
    rpId: TEST_RP_ID,
    origin: ORIGIN,
    challenge: await resumeChallenge({ fleet: test.fleet, freeze }),
    ...(counter === undefined ? {} : { counter }),
  });
  return { v: PROTOCOL_VERSION, fleet: test.fleet, freeze, device, assertion };
}

const vote = (test: TestFleet, body: ResumeVote) =>
  call<FleetState>('POST', `/v1/fleets/${test.fleet}/resume`, { json: body });

describe('kill switch', () => {
  it('carries a device-signed freeze to every connected daemon, of every host', async () => {
    const test = await newFleet({ push: false });
    const { hostToken: secondToken } = await pairPhone(test.fleet, await createHost(), {
      phone: test.phones[0]!.phone,
      push: false,
    });
    const daemons = await Promise.all([
      DaemonSocket.connect(test),
      DaemonSocket.connect(test),
      DaemonSocket.connect({ ...test, hostToken: secondToken! }),
    ]);
    const frozen = await freezeBy(test, test.phones[0]!.phone);
    expect(frozen.status).toBe(200);
    expect(frozen.body).toMatchObject({
      frozen: true,
      epoch: 1,
      freeze: frozen.envelope,
      reason: 'prod incident 412',
      frozenBy: { role: 'device', id: test.phones[0]!.phone.id },
    });
    for (const daemon of daemons) {
      expect((await daemon.next('frozen')).event).toMatchObject({
        type: 'frozen',
        epoch: 1,
        envelope: { body: { reason: 'prod incident 412' } },
      });
      daemon.close();
    }
  });

  it('takes a freeze signed by a host key (latch panic)', async () => {
    const test = await newFleet({ push: false });
    const envelope = await signEnvelope(
      'freeze',
      { fleet: test.fleet, reason: 'latch panic' },
      { role: 'host', id: test.host.id },
      test.host.hostKeys.privateKey,
    );
    const frozen = await call<FleetState>('POST', `/v1/fleets/${test.fleet}/freeze`, { json: envelope });
    expect(frozen.body).toMatchObject({ frozen: true, frozenBy: { role: 'host', id: test.host.id } });
  });

  it('takes from a daemon only a quorum some phones of a fleet can meet, written as a whole number', async () => {
    const test = await newFleet({ phones: 1, quorum: 1, push: false });
    const needed = async () =>
      (await call<FleetState>('GET', `/v1/fleets/${test.fleet}/state`, { headers: bearer(test.hostToken) }))
        .body.needed;
    for (const quorum of ['17', '32', '0x10', '1e1', ' 5', '0']) {
      (await DaemonSocket.connect(test, `?quorum=${encodeURIComponent(quorum)}`)).close();
      expect(await needed()).toBe(1);
    }
    (await DaemonSocket.connect(test, '?quorum=16')).close();
    expect(await needed()).toBe(16);
  });

  it('resumes only with the quorum of distinct phones, votes bound to the freeze in force', async () => {
    const test = await newFleet({ phones: 3, quorum: 2, push: false });
    const [first, second, third] = test.phones.map((paired) => paired.phone) as [
      TestPhone,
      TestPhone,
      TestPhone,
    ];
    const daemon = await DaemonSocket.connect(test);
    const { id: freeze } = await freezeBy(test, first);

    const afterOne = await vote(test, await ballot(test, first, freeze));
    expect(afterOne.body).toMatchObject({ frozen: true, votes: [first.id], needed: 2 });

    // The same phone again is still one vote.
    const again = await vote(test, await ballot(test, first, freeze));
    expectRefusedReply(again, 409, 'already_used');

    // A phone claiming to be another: its passkey is not that device's.
    const spoofed = await vote(test, await ballot(test, first, freeze, third.id));
    expectRefusedReply(spoofed, 401, 'unknown_credential');

    const afterTwo = await vote(test, await ballot(test, second, freeze));
    expect(afterTwo.body).toMatchObject({ frozen: false, epoch: 1, votes: [] });
    expect(afterTwo.body).not.toHaveProperty('freeze');

    const resumed = await daemon.next('resumed');
    expect(resumed.event).toMatchObject({ type: 'resumed', freeze });
    // The daemon gets the votes themselves, and verifies them with its own keys.
    const votes = resumed.event.type === 'resumed' ? resumed.event.votes : [];
    expect(votes.map((cast) => cast.device).sort()).toEqual([first.id, second.id].sort());
    for (const cast of votes) {
      const device = test.phones.find((paired) => paired.phone.id === cast.device)!.device;
      expect(
        (
          await verifyResumeVote(
            cast,
            { fleet: test.fleet, freeze, origins: [ORIGIN], rpId: TEST_RP_ID },
            device.credential,
          )
        ).ok,
      ).toBe(true);
    }
    daemon.close();
  });

  it('no longer counts the vote of a phone revoked while the fleet is frozen', async () => {
    const test = await newFleet({ phones: 2, quorum: 2, push: false });
    const [first, second] = test.phones.map((paired) => paired.phone) as [TestPhone, TestPhone];
    const { id: freeze } = await freezeBy(test, first);
    expect((await vote(test, await ballot(test, second, freeze))).body).toMatchObject({ votes: [second.id] });

    const revoked = await revokeAs(test, first, second.id);
    expect(revoked.status).toBe(200);
    expect(
      (await call<FleetState>('GET', `/v1/fleets/${test.fleet}/state`, { headers: bearer(test.hostToken) }))
        .body,
    ).toMatchObject({ frozen: true, votes: [], needed: 2 });
    expect((await vote(test, await ballot(test, first, freeze))).body).toMatchObject({
      frozen: true,
      votes: [first.id],
      needed: 2,
    });
  });

  it('refuses a vote for an earlier freeze after a new one (stale_freeze), and one relabelled with the new freeze', async () => {
    const test = await newFleet({ phones: 2, quorum: 2, push: false });
    const [first, second] = test.phones.map((paired) => paired.phone) as [TestPhone, TestPhone];
    const { id: earlier } = await freezeBy(test, first);
    const oldVote = await ballot(test, second, earlier);
    const current = await freezeBy(test, first, 'second incident');

    const stale = await vote(test, oldVote);
    expectRefusedReply(stale, 409, 'stale_freeze');
    const relabelled = await vote(test, { ...oldVote, freeze: current.id });
    expectRefusedReply(relabelled, 403, 'challenge_mismatch');

    const state = await call<FleetState>('GET', `/v1/fleets/${test.fleet}/state`, {
      headers: bearer(test.hostToken),
    });
    expect(state.body).toMatchObject({ frozen: true, epoch: 2, votes: [], freeze: current.envelope });
    // Anyone holding the state computes the id the votes bind to.
    expect(await freezeId(state.body.freeze!)).toBe(current.id);
  });

  it('refuses a vote cast in an earlier freeze, replayed after the fleet resumed and froze again', async () => {
    const test = await newFleet({ phones: 2, quorum: 1, push: false });
    const [first, second] = test.phones.map((paired) => paired.phone) as [TestPhone, TestPhone];
    const { id: earlier } = await freezeBy(test, first);
    const honest = await ballot(test, first, earlier);
    expect((await vote(test, honest)).body).toMatchObject({ frozen: false });
    const spare = await ballot(test, second, earlier);
    await freezeBy(test, first, 'again');

    const replayed = await vote(test, spare);
    expectRefusedReply(replayed, 409, 'stale_freeze');
  });

  it('refuses a vote without user verification', async () => {
    const test = await newFleet({ push: false });
    const phone = test.phones[0]!.phone;
    const { id: freeze } = await freezeBy(test, phone);
    const assertion = await phone.authenticator.assert({
      rpId: TEST_RP_ID,
      origin: ORIGIN,
      challenge: await resumeChallenge({ fleet: test.fleet, freeze }),
      userVerified: false,
    });
    const refused = await vote(test, { v: 1, fleet: test.fleet, freeze, device: phone.id, assertion });
    expectRefusedReply(refused, 403, 'user_not_verified');
  });

  it('stores the passkey’s counter after a vote: a clone still at that counter cannot end the next freeze', async () => {
    const test = await newFleet({ push: false, quorum: 1 });
    const phone = test.phones[0]!.phone;
    const first = await freezeBy(test, phone);
    expect((await vote(test, await ballot(test, phone, first.id, phone.id, 7))).body).toMatchObject({
      frozen: false,
    });
    const second = await freezeBy(test, phone, 'again');
    const cloned = await vote(test, await ballot(test, phone, second.id, phone.id, 7));
    expectRefusedReply(cloned, 403, 'counter_not_increased');
  });

  it('resumes a one-phone fleet with one vote when its host asks for 1 of 1', async () => {
    const test = await newFleet({ push: false, quorum: 1 });
    const phone = test.phones[0]!.phone;
    const { id: freeze } = await freezeBy(test, phone);
    expect((await vote(test, await ballot(test, phone, freeze))).body).toMatchObject({ frozen: false });
  });
});

describe('a fleet object created before freezes had ids', () => {
  it('gets the new switch at its next start: frozen as it was, not votable, until a new freeze', async () => {
    const test = await newFleet({ push: false, quorum: 1 });
    const phone = test.phones[0]!.phone;
    // The switch and votes as the first version made them, frozen in epoch 3 with a vote cast
    // (and its requests and offers tables, from before migrations 2 and 4).
    await runInDurableObject(fleetStub(test.fleet), (_instance: Fleet, state) => {
      state.storage.sql.exec(`
        ALTER TABLE requests DROP COLUMN pushed;
        ALTER TABLE offers ADD COLUMN member_only INTEGER NOT NULL DEFAULT 0;
        DROP TABLE switch;
        DROP TABLE votes;
        DELETE FROM meta WHERE key = 'schema_step';
        CREATE TABLE switch (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          frozen INTEGER NOT NULL,
          epoch INTEGER NOT NULL,
          reason TEXT,
          frozen_at INTEGER,
          frozen_by_role TEXT,
          frozen_by_id TEXT
        );
        INSERT INTO switch VALUES (1, 1, 3, 'before the upgrade', 1767225600000, 'host', 'old-host');
        CREATE TABLE votes (epoch INTEGER NOT NULL, device TEXT NOT NULL, vote TEXT NOT NULL, PRIMARY KEY (epoch, device));
        INSERT INTO votes VALUES (3, 'some-phone', '{}');
      `);
    });
    await abortAllDurableObjects();

    const state = () =>
      call<FleetState>('GET', `/v1/fleets/${test.fleet}/state`, { headers: bearer(test.hostToken) });
    const before = await state();
    expect(before.body).toMatchObject({ frozen: true, epoch: 3, reason: 'before the upgrade', votes: [] });
    expect(before.body).not.toHaveProperty('freeze');
    const columns = await runInDurableObject(fleetStub(test.fleet), (_instance: Fleet, stored) => ({
      switch: stored.storage.sql.exec('SELECT name FROM pragma_table_info(?)', 'switch').toArray(),
      votes: stored.storage.sql.exec('SELECT name FROM pragma_table_info(?)', 'votes').toArray(),
    }));
    expect(columns.switch.map(({ name }) => name)).toEqual(expect.arrayContaining(['envelope', 'freeze_id']));
    expect(columns.votes.map(({ name }) => name)).toEqual(['freeze', 'device', 'vote']);

    // Nothing names the old freeze, so no vote can end it.
    const unnamed = await vote(test, await ballot(test, phone, toBase64url(new Uint8Array(32))));
    expectRefusedReply(unnamed, 409, 'stale_freeze');
    // A new freeze carries its envelope, and its votes count.
    const again = await freezeBy(test, phone, 'freeze again');
    expect(again.body).toMatchObject({ frozen: true, epoch: 4, freeze: again.envelope });
    expect((await vote(test, await ballot(test, phone, again.id))).body).toMatchObject({ frozen: false });
  });
});
