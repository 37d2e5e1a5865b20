import { beforeEach, describe, expect, it } from 'vitest';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { keyId } from '../../shared/keys/p256.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import {
  freezeEnvelopeSchema,
  type DenyEnvelope,
  type FreezeEnvelope,
} from '../../shared/messages/envelopes.ts';
import { parse } from '../../shared/schema/parse.ts';
import { NOW } from '../../scripts/lib/approvalFixture.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { createHost, createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';

let phone: TestPhone;
let freeze: FreezeEnvelope;

beforeEach(async () => {
  phone = await createPhone();
  freeze = await signEnvelope(
    'freeze',
    { fleet: 'fleet-1', reason: 'prod incident 412' },
    { role: 'device', id: phone.id },
    phone.deviceKeys.privateKey,
    NOW,
  );
});

const keyOf = (who: TestPhone) => fromBase64url(who.deviceKey);

describe('device-key envelopes', () => {
  it('verifies a freeze signed by the device key', async () => {
    expect(await verifyEnvelope(freeze, { kind: 'freeze', publicKey: keyOf(phone) })).toEqual({
      ok: true,
      value: freeze,
    });
  });

  it('travels as a message its parser accepts', () => {
    expect(parse(freezeEnvelopeSchema, JSON.parse(JSON.stringify(freeze)))).toEqual({
      ok: true,
      value: freeze,
    });
  });

  it('refuses a freeze whose reason was changed', async () => {
    expectRefused(
      await verifyEnvelope(
        { ...freeze, body: { ...freeze.body, reason: 'all clear' } },
        { kind: 'freeze', publicKey: keyOf(phone) },
      ),
      'bad_signature',
    );
  });

  it('refuses a freeze moved to another fleet', async () => {
    expectRefused(
      await verifyEnvelope(
        { ...freeze, body: { ...freeze.body, fleet: 'fleet-2' } },
        { kind: 'freeze', publicKey: keyOf(phone) },
      ),
      'bad_signature',
    );
  });

  it('refuses a signature with one byte flipped', async () => {
    const sig = fromBase64url(freeze.sig);
    sig[5]! ^= 0x80;
    expectRefused(
      await verifyEnvelope({ ...freeze, sig: toBase64url(sig) }, { kind: 'freeze', publicKey: keyOf(phone) }),
      'bad_signature',
    );
  });

  it('refuses a signature by another key that claims this device’s id', async () => {
    const intruder = await createPhone('Intruder');
    const forged = await signEnvelope(
      'freeze',
      freeze.body,
      { role: 'device', id: phone.id },
      intruder.deviceKeys.privateKey,
      NOW,
    );
    expectRefused(await verifyEnvelope(forged, { kind: 'freeze', publicKey: keyOf(phone) }), 'bad_signature');
  });

  it('refuses a signer id that is not the id of the key it is checked with', async () => {
    const intruder = await createPhone('Intruder');
    expectRefused(
      await verifyEnvelope(freeze, { kind: 'freeze', publicKey: keyOf(intruder) }),
      'wrong_signer',
    );
  });

  it('refuses an envelope of another kind (a deny replayed as a freeze)', async () => {
    const deny: DenyEnvelope = await signEnvelope(
      'deny',
      { fleet: 'fleet-1', host: 'h', requestId: 'r' },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
      NOW,
    );
    expectRefused(await verifyEnvelope(deny, { kind: 'freeze', publicKey: keyOf(phone) }), 'wrong_kind');
  });

  it('refuses an envelope whose kind was relabelled after signing', async () => {
    const relabelled = { ...freeze, kind: 'deny' } as unknown as DenyEnvelope;
    expectRefused(
      await verifyEnvelope(relabelled, { kind: 'deny', publicKey: keyOf(phone) }),
      'bad_signature',
    );
  });

  it('refuses a stale envelope when freshness is asked for, and accepts one within the window', async () => {
    expectRefused(
      await verifyEnvelope(freeze, {
        kind: 'freeze',
        publicKey: keyOf(phone),
        maxSkewMs: 60_000,
        now: NOW + 60_001,
      }),
      'stale_timestamp',
    );
    expectRefused(
      await verifyEnvelope(freeze, {
        kind: 'freeze',
        publicKey: keyOf(phone),
        maxSkewMs: 60_000,
        now: NOW - 60_001,
      }),
      'stale_timestamp',
    );
    expect(
      (
        await verifyEnvelope(freeze, {
          kind: 'freeze',
          publicKey: keyOf(phone),
          maxSkewMs: 60_000,
          now: NOW + 60_000,
        })
      ).ok,
    ).toBe(true);
  });

  it('verifies a host-signed freeze with the host key', async () => {
    const host = await createHost();
    const byHost = await signEnvelope(
      'freeze',
      { fleet: 'fleet-1', reason: 'latch panic' },
      { role: 'host', id: host.id },
      host.hostKeys.privateKey,
      NOW,
    );
    expect(
      (await verifyEnvelope(byHost, { kind: 'freeze', publicKey: fromBase64url(host.hostKey) })).ok,
    ).toBe(true);
  });

  it('refuses a key that is not a P-256 point', async () => {
    const notAPoint = new Uint8Array(65);
    notAPoint[0] = 4;
    const signer = { role: 'device' as const, id: await keyId(notAPoint) };
    expectRefused(
      await verifyEnvelope({ ...freeze, signer }, { kind: 'freeze', publicKey: notAPoint }),
      'invalid_key',
    );
  });
});
