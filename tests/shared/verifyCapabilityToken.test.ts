import { beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalBinding } from '../../shared/approvals/approvalChallenge.ts';
import { MemorySingleUseStore } from '../../shared/approvals/singleUseStore.ts';
import {
  verifyCapabilityToken,
  type TokenExpectation,
} from '../../shared/approvals/verifyCapabilityToken.ts';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import { capabilityTokenSchema, type CapabilityToken } from '../../shared/messages/approvals.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import type { PairedCredential } from '../../shared/webauthn/pairedCredential.ts';
import {
  bindingFor,
  NOW,
  pairedFleet,
  requestDetails,
  signToken,
  type PairedFleet,
} from '../../scripts/lib/approvalFixture.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { createPhone, TEST_ORIGIN, TEST_RP_ID } from '../../scripts/lib/softwarePhone.ts';

let fleet: PairedFleet;
let binding: ApprovalBinding;
let expected: TokenExpectation;
let credential: PairedCredential;
let store: MemorySingleUseStore;

beforeEach(async () => {
  fleet = await pairedFleet();
  binding = await bindingFor(requestDetails(fleet));
  expected = { ...binding, origins: [TEST_ORIGIN], rpId: TEST_RP_ID, now: NOW };
  credential = { ...fleet.device.credential };
  store = new MemorySingleUseStore(() => NOW);
});

const verify = (
  token: CapabilityToken,
  overrides: Partial<TokenExpectation> = {},
  paired: PairedCredential | undefined = credential,
) => verifyCapabilityToken(token, { ...expected, ...overrides }, paired, store);

function withClientData(
  token: CapabilityToken,
  edit: (clientData: Record<string, unknown>) => void,
): CapabilityToken {
  const clientData = JSON.parse(new TextDecoder().decode(fromBase64url(token.assertion.clientDataJSON)));
  edit(clientData);
  return {
    ...token,
    assertion: { ...token.assertion, clientDataJSON: toBase64url(utf8(JSON.stringify(clientData))) },
  };
}

function flipByte(text: string, index: number): string {
  const bytes = fromBase64url(text);
  bytes[index % bytes.length]! ^= 0x01;
  return toBase64url(bytes);
}

describe('verifyCapabilityToken', () => {
  it('accepts a token signed for this request and returns the new counter', async () => {
    const result = await verify(await signToken(fleet.phone, binding));
    expect(result).toEqual({ ok: true, value: { device: fleet.phone.id, decision: 'approve', counter: 1 } });
  });

  it('accepts passkeys whose counter is always 0', async () => {
    const zeroFleet = await pairedFleet({ counter: 'zero' });
    const zeroBinding = await bindingFor(requestDetails(zeroFleet));
    const token = await signToken(zeroFleet.phone, zeroBinding);
    const result = await verifyCapabilityToken(
      token,
      { ...zeroBinding, origins: [TEST_ORIGIN], rpId: TEST_RP_ID, now: NOW },
      zeroFleet.device.credential,
      store,
    );
    expect(result.ok && result.value.counter).toBe(0);
  });

  describe('type', () => {
    it.each(['webauthn.create', 'payment.get', ''])('refuses clientData.type %j', async (type) => {
      expectRefused(await verify(await signToken(fleet.phone, binding, { type })), 'wrong_type');
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
      expectRefused(
        await verify(await signToken(fleet.phone, { ...binding, ...change(binding) })),
        'challenge_mismatch',
      );
    });

    it('accepts a grant only as signed: another grant, or none, is another challenge', async () => {
      const granted = await signToken(fleet.phone, { ...binding, grant: 'session' });
      expectRefused(await verify(granted), 'challenge_mismatch');
      expectRefused(await verify(granted, { grant: 'half_hour' }), 'challenge_mismatch');
      expect((await verify(granted, { grant: 'session' })).ok).toBe(true);
    });

    it('refuses a token whose clientData was rewritten to carry the right challenge', async () => {
      const forOther = await signToken(fleet.phone, { ...binding, requestId: 'another-request' });
      const right = await signToken(fleet.phone, binding);
      const rightChallenge = JSON.parse(
        new TextDecoder().decode(fromBase64url(right.assertion.clientDataJSON)),
      ).challenge;
      const forged = withClientData(forOther, (clientData) => (clientData['challenge'] = rightChallenge));
      expectRefused(await verify(forged), 'bad_signature');
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
      expectRefused(await verify(await signToken(fleet.phone, binding, { origin })), 'origin_mismatch');
    });

    it('refuses crossOrigin true', async () => {
      expectRefused(
        await verify(await signToken(fleet.phone, binding, { crossOrigin: true })),
        'cross_origin',
      );
    });

    it('refuses a crossOrigin that is not a boolean', async () => {
      const token = withClientData(
        await signToken(fleet.phone, binding),
        (clientData) => (clientData['crossOrigin'] = 'false'),
      );
      expectRefused(await verify(token), 'cross_origin');
    });

    it('refuses a topOrigin', async () => {
      expectRefused(
        await verify(await signToken(fleet.phone, binding, { topOrigin: 'https://latch.test' })),
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
      expectRefused(await verify(await signToken(fleet.phone, binding, { rpId })), 'rp_id_mismatch');
    });
  });

  describe('flags', () => {
    it('refuses UP=0', async () => {
      expectRefused(
        await verify(await signToken(fleet.phone, binding, { userPresent: false })),
        'user_not_present',
      );
    });

    it('refuses UV=0', async () => {
      expectRefused(
        await verify(await signToken(fleet.phone, binding, { userVerified: false })),
        'user_not_verified',
      );
    });
  });

  describe('signature', () => {
    it.each([0, 7, 40, 70])('refuses a signature with byte %i flipped', async (index) => {
      const token = await signToken(fleet.phone, binding);
      const forged = {
        ...token,
        assertion: { ...token.assertion, signature: flipByte(token.assertion.signature, index) },
      };
      expectRefused(await verify(forged), 'bad_signature');
    });

    it('refuses authenticator data changed after signing (a raised counter)', async () => {
      const token = await signToken(fleet.phone, binding);
      const forged = {
        ...token,
        assertion: { ...token.assertion, authenticatorData: flipByte(token.assertion.authenticatorData, 36) },
      };
      expectRefused(await verify(forged), 'bad_signature');
    });

    it('refuses a signature made by another credential under this one’s id', async () => {
      const intruder = await createPhone('Intruder');
      const token = await signToken(intruder, binding);
      const forged = {
        ...token,
        device: fleet.phone.id,
        assertion: { ...token.assertion, credentialId: credential.id },
      };
      expectRefused(await verify(forged), 'bad_signature');
    });

    it('refuses a credential the host never paired', async () => {
      const intruder = await createPhone('Intruder');
      expectRefused(await verify(await signToken(intruder, binding), {}, undefined), 'unknown_credential');
    });

    it('refuses when the stored credential is not the one the assertion names', async () => {
      const intruder = await createPhone('Intruder');
      expectRefused(await verify(await signToken(intruder, binding)), 'unknown_credential');
    });

    it('refuses clientDataJSON that is not JSON', async () => {
      const token = await signToken(fleet.phone, binding);
      const forged = {
        ...token,
        assertion: { ...token.assertion, clientDataJSON: toBase64url(utf8('not json')) },
      };
      expectRefused(await verify(forged), 'malformed_client_data');
    });
  });

  describe('counter', () => {
    it('refuses a counter equal to the stored one', async () => {
      expectRefused(
        await verify(
          await signToken(fleet.phone, binding, { counter: 5 }),
          {},
          { ...credential, counter: 5 },
        ),
        'counter_not_increased',
      );
    });

    it('refuses a counter lower than the stored one', async () => {
      expectRefused(
        await verify(
          await signToken(fleet.phone, binding, { counter: 4 }),
          {},
          { ...credential, counter: 5 },
        ),
        'counter_not_increased',
      );
    });

    it('refuses a counter of 0 once a nonzero one was seen', async () => {
      expectRefused(
        await verify(
          await signToken(fleet.phone, binding, { counter: 0 }),
          {},
          { ...credential, counter: 5 },
        ),
        'counter_not_increased',
      );
    });
  });

  describe('device', () => {
    it('refuses a token claiming another device than the passkey’s', async () => {
      const other = await createPhone('Other');
      const token = { ...(await signToken(fleet.phone, binding)), device: other.id };
      expectRefused(await verify(token), 'device_mismatch');
    });
  });

  describe('expiry', () => {
    it('refuses an expired token', async () => {
      expectRefused(await verify(await signToken(fleet.phone, binding), { now: binding.exp + 1 }), 'expired');
    });

    it('refuses a token at exactly exp', async () => {
      expectRefused(await verify(await signToken(fleet.phone, binding), { now: binding.exp }), 'expired');
    });

    it('accepts a token one millisecond before exp', async () => {
      expect((await verify(await signToken(fleet.phone, binding), { now: binding.exp - 1 })).ok).toBe(true);
    });
  });

  describe('reuse', () => {
    it('refuses a second use of the same token', async () => {
      const token = await signToken(fleet.phone, binding);
      expect((await verify(token)).ok).toBe(true);
      expectRefused(await verify(token, {}, { ...credential, counter: 0 }), 'already_used');
    });

    it('refuses a second token for the same request and decision, even with a fresh signature', async () => {
      expect((await verify(await signToken(fleet.phone, binding))).ok).toBe(true);
      expectRefused(
        await verify(await signToken(fleet.phone, binding), {}, { ...credential, counter: 1 }),
        'already_used',
      );
    });

    it('gives exactly one success to 100 concurrent uses of one token', async () => {
      const token = await signToken(fleet.phone, binding);
      const results = await Promise.all(Array.from({ length: 100 }, () => verify(token)));
      expect(results.filter((result) => result.ok)).toHaveLength(1);
      expect(results.filter((result) => !result.ok && result.error.code === 'already_used')).toHaveLength(99);
    });

    it('does not use up a challenge on a refused token, so the real one still passes', async () => {
      const token = await signToken(fleet.phone, binding);
      const forged = {
        ...token,
        assertion: { ...token.assertion, signature: flipByte(token.assertion.signature, 10) },
      };
      expectRefused(await verify(forged), 'bad_signature');
      expect((await verify(token)).ok).toBe(true);
    });
  });

  describe('wire form', () => {
    const wire = async (edit: (token: Record<string, unknown>) => void) => {
      const token = JSON.parse(JSON.stringify(await signToken(fleet.phone, binding)));
      edit(token);
      return parseJson(capabilityTokenSchema, JSON.stringify(token));
    };

    it('parses a token as it travels', async () => {
      expect((await wire(() => {})).ok).toBe(true);
    });

    it.each([
      ['padding', (s: string) => `${s}==`],
      ['the standard alphabet', (s: string) => `+/${s.slice(2)}`],
      ['a space', (s: string) => `${s.slice(0, 4)} ${s.slice(4)}`],
    ])('refuses a signature in base64url with %s', async (_what, spoil) => {
      expectRefused(
        await wire(
          (token) =>
            ((token['assertion'] as Record<string, string>)['signature'] = spoil(
              (token['assertion'] as Record<string, string>)['signature']!,
            )),
        ),
        'malformed_base64url',
      );
    });

    it.each(['clientDataJSON', 'authenticatorData', 'signature', 'credentialId'])(
      'refuses a token without assertion.%s',
      async (member) => {
        expectRefused(
          await wire((token) => delete (token['assertion'] as Record<string, unknown>)[member]),
          'missing_field',
        );
      },
    );

    it.each(['requestId', 'device', 'decision', 'v'])('refuses a token without %s', async (member) => {
      expectRefused(await wire((token) => delete token[member]), 'missing_field');
    });

    it('refuses an oversized clientDataJSON before decoding it', async () => {
      const huge = toBase64url(new Uint8Array(LIMITS.clientDataBytes + 1));
      expectRefused(
        await wire((token) => ((token['assertion'] as Record<string, unknown>)['clientDataJSON'] = huge)),
        'field_too_large',
      );
    });

    it('refuses authenticator data shorter than 37 bytes', async () => {
      expectRefused(
        await wire(
          (token) =>
            ((token['assertion'] as Record<string, unknown>)['authenticatorData'] = toBase64url(
              new Uint8Array(36),
            )),
        ),
        'invalid_field',
      );
    });

    it('refuses another protocol version', async () => {
      expectRefused(await wire((token) => (token['v'] = 2)), 'unknown_version');
    });

    it('refuses an unknown member', async () => {
      expectRefused(await wire((token) => (token['approvedBy'] = 'relay')), 'unknown_field');
    });
  });
});
