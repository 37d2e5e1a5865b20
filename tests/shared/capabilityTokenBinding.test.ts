import { describe, expect, it } from 'vitest';
import type { ApprovalBinding } from '../../shared/approvals/approvalChallenge.ts';
import type { CapabilityToken } from '../../shared/messages/approvals.ts';
import { verifyCapabilityToken } from '../../shared/approvals/verifyCapabilityToken.ts';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import {
  bindingFor,
  NOW,
  pairedFleet,
  requestDetails,
  signToken,
} from '../../scripts/lib/approvalFixture.ts';
import { capabilityTokenRigForEachTest, withClientData } from '../support/capabilityTokenRig.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { TEST_ORIGIN, TEST_RP_ID } from '../../scripts/lib/softwarePhone.ts';

const rig = capabilityTokenRigForEachTest();

describe('verifyCapabilityToken', () => {
  it('accepts a token signed for this request and returns the new counter', async () => {
    const result = await rig.verify(await signToken(rig.fleet.phone, rig.binding));
    expect(result).toEqual({
      ok: true,
      value: { device: rig.fleet.phone.id, decision: 'approve', counter: 1 },
    });
  });

  it('accepts passkeys whose counter is always 0', async () => {
    const zeroFleet = await pairedFleet({ counter: 'zero' });
    const zeroBinding = await bindingFor(requestDetails(zeroFleet));
    const token = await signToken(zeroFleet.phone, zeroBinding);
    const result = await verifyCapabilityToken(
      token,
      { ...zeroBinding, origins: [TEST_ORIGIN], rpId: TEST_RP_ID, now: NOW },
      zeroFleet.device.credential,
      rig.store,
    );
    expect(result.ok && result.value.counter).toBe(0);
  });

  describe('the token’s own members', () => {
    it.each<[string, Partial<CapabilityToken>, 'context_mismatch' | 'invalid_field']>([
      ['another fleet', { fleet: 'another-fleet' }, 'context_mismatch'],
      ['another host', { host: 'another-host' }, 'context_mismatch'],
      ['another request', { requestId: 'another-request' }, 'context_mismatch'],
      ['a deny', { decision: 'deny' }, 'invalid_field'],
    ])('refuses a genuine approval whose token a relay rewrote to name %s', async (_what, rewrite, code) => {
      const genuine = await signToken(rig.fleet.phone, rig.binding);
      expectRefused(await rig.verify({ ...genuine, ...rewrite }), code);
      // Refused before its signature was checked: it used nothing, and the genuine token still counts.
      expect((await rig.verify(genuine)).ok).toBe(true);
    });
  });

  describe('type', () => {
    it.each(['webauthn.create', 'payment.get', ''])('refuses clientData.type %j', async (type) => {
      expectRefused(await rig.verify(await signToken(rig.fleet.phone, rig.binding, { type })), 'wrong_type');
    });
  });

  describe('challenge', () => {
    it.each<[string, (original: ApprovalBinding) => Partial<ApprovalBinding>]>([
      ['another request', () => ({ requestId: 'another-request' })],
      ['another decision', () => ({ decision: 'deny' })],
      ['another host', () => ({ host: 'another-host' })],
      ['another fleet', () => ({ fleet: 'another-fleet' })],
      ['other request text', () => ({ requestHash: toBase64url(new Uint8Array(32)) })],
      ['another nonce', () => ({ nonce: toBase64url(new Uint8Array(16)) })],
      ['another deadline', (original) => ({ exp: original.exp + 1 })],
      // An approve-once is no grant, and one grant is not another (docs/protocol.md).
      ['a grant, when the host expects an approve-once', () => ({ grant: 'half_hour' })],
    ])('refuses a token issued for %s', async (_what, change) => {
      const issued = await signToken(rig.fleet.phone, { ...rig.binding, ...change(rig.binding) });
      // Its members relabelled to this request's by a relay: only the signature tells.
      const { fleet, host, requestId, decision } = rig.binding;
      expectRefused(await rig.verify({ ...issued, fleet, host, requestId, decision }), 'challenge_mismatch');
    });

    it('accepts a grant only as signed: another grant, or none, is another challenge', async () => {
      const granted = await signToken(rig.fleet.phone, { ...rig.binding, grant: 'session' });
      expectRefused(await rig.verify(granted), 'challenge_mismatch');
      expectRefused(await rig.verify(granted, { grant: 'half_hour' }), 'challenge_mismatch');
      expect((await rig.verify(granted, { grant: 'session' })).ok).toBe(true);
    });

    it('refuses a token whose clientData was rewritten to carry the right challenge', async () => {
      const forOther = await signToken(rig.fleet.phone, { ...rig.binding, requestId: 'another-request' });
      const right = await signToken(rig.fleet.phone, rig.binding);
      const rightChallenge = JSON.parse(
        new TextDecoder().decode(fromBase64url(right.assertion.clientDataJSON)),
      ).challenge;
      const forged = withClientData(forOther, (clientData) => (clientData['challenge'] = rightChallenge));
      // Relabelled as this request's, as the relay would have to.
      expectRefused(await rig.verify({ ...forged, requestId: rig.binding.requestId }), 'bad_signature');
    });
  });

  describe('origin', () => {
    it.each([
      ['another scheme', 'http://latch.test'],
      ['another port', 'https://latch.test:8443'],
      ['a subdomain', 'https://evil.latch.test'],
      ['another site', 'https://latch.example'],
      ['a trailing slash', 'https://latch.test/'],
    ])('refuses %s', async (_what, origin) => {
      expectRefused(
        await rig.verify(await signToken(rig.fleet.phone, rig.binding, { origin })),
        'origin_mismatch',
      );
    });

    it('refuses crossOrigin true', async () => {
      expectRefused(
        await rig.verify(await signToken(rig.fleet.phone, rig.binding, { crossOrigin: true })),
        'cross_origin',
      );
    });

    it('accepts a clientData without crossOrigin, as older Safari writes it', async () => {
      const result = await rig.verify(
        await signToken(rig.fleet.phone, rig.binding, { crossOrigin: 'omitted' }),
      );
      expect(result).toEqual({
        ok: true,
        value: { device: rig.fleet.phone.id, decision: 'approve', counter: 1 },
      });
    });

    it('refuses a crossOrigin that is not a boolean', async () => {
      const token = withClientData(
        await signToken(rig.fleet.phone, rig.binding),
        (clientData) => (clientData['crossOrigin'] = 'false'),
      );
      expectRefused(await rig.verify(token), 'cross_origin');
    });

    it('refuses a topOrigin', async () => {
      expectRefused(
        await rig.verify(await signToken(rig.fleet.phone, rig.binding, { topOrigin: 'https://latch.test' })),
        'top_origin_present',
      );
    });
  });

  describe('rpIdHash', () => {
    it.each([
      ['another RP ID', 'latch.example'],
      ['a parent domain', 'test'],
      ['a subdomain', 'evil.latch.test'],
    ])('refuses %s', async (_what, rpId) => {
      expectRefused(
        await rig.verify(await signToken(rig.fleet.phone, rig.binding, { rpId })),
        'rp_id_mismatch',
      );
    });
  });

  describe('flags', () => {
    it('refuses UP=0', async () => {
      expectRefused(
        await rig.verify(await signToken(rig.fleet.phone, rig.binding, { userPresent: false })),
        'user_not_present',
      );
    });

    it('refuses UV=0', async () => {
      expectRefused(
        await rig.verify(await signToken(rig.fleet.phone, rig.binding, { userVerified: false })),
        'user_not_verified',
      );
    });
  });
});
