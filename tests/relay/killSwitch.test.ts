import { describe, expect, it } from 'vitest';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { resumeChallenge } from '../../shared/kill-switch/resumeChallenge.ts';
import { verifyResumeVote } from '../../shared/kill-switch/verifyResumeVote.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { createHost, TEST_RP_ID, type TestPhone } from '../support/phone.ts';
import { bearer, call, DaemonSocket, newFleet, ORIGIN, pairPhone, type TestFleet } from './harness.ts';

async function freezeBy(test: TestFleet, phone: TestPhone, reason = 'prod incident 412') {
  const envelope = await signEnvelope(
    'freeze',
    { fleet: test.fleet, reason },
    { role: 'device', id: phone.id },
    phone.deviceKeys.privateKey,
  );
  return call<FleetState>('POST', `/v1/fleets/${test.fleet}/freeze`, { json: envelope });
}

async function ballot(
  test: TestFleet,
  phone: TestPhone,
  epoch: number,
  device = phone.id,
): Promise<ResumeVote> {
  const assertion = await phone.authenticator.assert({
    rpId: TEST_RP_ID,
    origin: ORIGIN,
    challenge: await resumeChallenge({ fleet: test.fleet, epoch }),
  });
  return { v: PROTOCOL_VERSION, fleet: test.fleet, epoch, device, assertion };
}

const vote = (test: TestFleet, body: ResumeVote) =>
  call<FleetState>('POST', `/v1/fleets/${test.fleet}/resume`, { json: body });
const errorCode = (body: unknown) => (body as { error: { code: string } }).error.code;

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

  it('resumes only with the quorum of distinct phones, votes bound to the current epoch', async () => {
    const test = await newFleet({ phones: 3, quorum: 2, push: false });
    const [first, second, third] = test.phones.map((paired) => paired.phone) as [
      TestPhone,
      TestPhone,
      TestPhone,
    ];
    const daemon = await DaemonSocket.connect(test);
    await freezeBy(test, first);
    const epoch = 1;

    const afterOne = await vote(test, await ballot(test, first, epoch));
    expect(afterOne.body).toMatchObject({ frozen: true, votes: [first.id], needed: 2 });

    // The same phone again is still one vote.
    const again = await vote(test, await ballot(test, first, epoch));
    expect({ status: again.status, code: errorCode(again.body) }).toEqual({
      status: 409,
      code: 'already_used',
    });

    // A phone claiming to be another: its passkey is not that device's.
    const spoofed = await vote(test, await ballot(test, first, epoch, third.id));
    expect({ status: spoofed.status, code: errorCode(spoofed.body) }).toEqual({
      status: 401,
      code: 'unknown_credential',
    });

    const afterTwo = await vote(test, await ballot(test, second, epoch));
    expect(afterTwo.body).toMatchObject({ frozen: false, epoch: 1, votes: [] });

    const resumed = await daemon.next('resumed');
    expect(resumed.event).toMatchObject({ type: 'resumed', epoch: 1 });
    // The daemon gets the votes themselves, and verifies them with its own keys.
    const votes = resumed.event.type === 'resumed' ? resumed.event.votes : [];
    expect(votes.map((cast) => cast.device).sort()).toEqual([first.id, second.id].sort());
    for (const cast of votes) {
      const device = test.phones.find((paired) => paired.phone.id === cast.device)!.device;
      expect(
        (
          await verifyResumeVote(
            cast,
            { fleet: test.fleet, epoch, origins: [ORIGIN], rpId: TEST_RP_ID },
            device.credential,
          )
        ).ok,
      ).toBe(true);
    }
    daemon.close();
  });

  it('refuses a vote from an earlier freeze, and a vote relabelled with the new epoch', async () => {
    const test = await newFleet({ phones: 2, quorum: 2, push: false });
    const [first, second] = test.phones.map((paired) => paired.phone) as [TestPhone, TestPhone];
    await freezeBy(test, first);
    const oldVote = await ballot(test, second, 1);
    await freezeBy(test, first, 'second incident');

    const stale = await vote(test, oldVote);
    expect({ status: stale.status, code: errorCode(stale.body) }).toEqual({
      status: 409,
      code: 'stale_epoch',
    });
    const relabelled = await vote(test, { ...oldVote, epoch: 2 });
    expect({ status: relabelled.status, code: errorCode(relabelled.body) }).toEqual({
      status: 403,
      code: 'challenge_mismatch',
    });

    const state = await call<FleetState>('GET', `/v1/fleets/${test.fleet}/state`, {
      headers: bearer(test.hostToken),
    });
    expect(state.body).toMatchObject({ frozen: true, epoch: 2, votes: [] });
  });

  it('refuses a vote without user verification', async () => {
    const test = await newFleet({ push: false });
    const phone = test.phones[0]!.phone;
    await freezeBy(test, phone);
    const assertion = await phone.authenticator.assert({
      rpId: TEST_RP_ID,
      origin: ORIGIN,
      challenge: await resumeChallenge({ fleet: test.fleet, epoch: 1 }),
      userVerified: false,
    });
    const refused = await vote(test, { v: 1, fleet: test.fleet, epoch: 1, device: phone.id, assertion });
    expect({ status: refused.status, code: errorCode(refused.body) }).toEqual({
      status: 403,
      code: 'user_not_verified',
    });
  });

  it('resumes a one-phone fleet with one vote when its host asks for 1 of 1', async () => {
    const test = await newFleet({ push: false, quorum: 1 });
    const phone = test.phones[0]!.phone;
    await freezeBy(test, phone);
    expect((await vote(test, await ballot(test, phone, 1))).body).toMatchObject({ frozen: false });
  });
});
