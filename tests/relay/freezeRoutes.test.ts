import { describe, expect, it } from 'vitest';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { createPhone } from '../../scripts/lib/softwarePhone.ts';
import { bearer, call, fleetForTheseTests, newFleet } from './harness.ts';

const { fleet, path } = fleetForTheseTests();

describe('phone routes', () => {
  it('refuses a freeze replayed with the same nonce', async () => {
    const own = await newFleet({ push: false });
    const ownPhone = own.phones[0]!.phone;
    const envelope = await signEnvelope(
      'freeze',
      { fleet: own.fleet, reason: 'test' },
      { role: 'device', id: ownPhone.id },
      ownPhone.deviceKeys.privateKey,
    );
    expect((await call('POST', `/v1/fleets/${own.fleet}/freeze`, { json: envelope })).status).toBe(200);
    expectRefusedReply(
      await call('POST', `/v1/fleets/${own.fleet}/freeze`, { json: envelope }),
      401,
      'replayed_nonce',
    );
  });

  it('refuses a freeze from a key outside the fleet', async () => {
    const stranger = await createPhone();
    const envelope = await signEnvelope(
      'freeze',
      { fleet: fleet().fleet, reason: 'prank' },
      { role: 'device', id: stranger.id },
      stranger.deviceKeys.privateKey,
    );
    expectRefusedReply(await call('POST', path('/freeze'), { json: envelope }), 401, 'unknown_credential');
  });

  it.each(['device', 'host'] as const)(
    'refuses a freeze under a known %s id whose signature is not that key’s (bad_signature)',
    async (role) => {
      const id = role === 'device' ? fleet().phones[0]!.phone.id : fleet().host.id;
      const envelope = await signEnvelope(
        'freeze',
        { fleet: fleet().fleet, reason: 'prank' },
        { role, id },
        (await createPhone()).deviceKeys.privateKey,
      );
      expectRefusedReply(await call('POST', path('/freeze'), { json: envelope }), 403, 'bad_signature');
      expect((await call('GET', path('/state'), { headers: bearer(fleet().hostToken) })).body).toMatchObject({
        frozen: false,
        epoch: 0,
      });
    },
  );

  it('refuses a vote when nothing is frozen', async () => {
    const own = await newFleet({ push: false });
    const ownPhone = own.phones[0]!.phone;
    const assertion = await ownPhone.authenticator.assert({
      rpId: 'latch.test',
      origin: 'https://latch.test',
      challenge: new Uint8Array(32),
    });
    expectRefusedReply(
      await call('POST', `/v1/fleets/${own.fleet}/resume`, {
        json: {
          v: 1,
          fleet: own.fleet,
          freeze: toBase64url(new Uint8Array(32)),
          device: ownPhone.id,
          assertion,
        },
      }),
      409,
      'not_frozen',
    );
  });
});
