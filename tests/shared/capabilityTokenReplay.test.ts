import { describe, expect, it } from 'vitest';
import { signToken } from '../../scripts/lib/approvalFixture.ts';
import { capabilityTokenRigForEachTest, withSignatureByteFlipped } from '../support/capabilityTokenRig.ts';
import { expectRefused } from '../support/expectRefused.ts';

const rig = capabilityTokenRigForEachTest();

describe('verifyCapabilityToken', () => {
  describe('counter', () => {
    it('refuses a counter equal to the stored one', async () => {
      expectRefused(
        await rig.verify(
          await signToken(rig.fleet.phone, rig.binding, { counter: 5 }),
          {},
          { ...rig.credential, counter: 5 },
        ),
        'counter_not_increased',
      );
    });

    it('refuses a counter lower than the stored one', async () => {
      expectRefused(
        await rig.verify(
          await signToken(rig.fleet.phone, rig.binding, { counter: 4 }),
          {},
          { ...rig.credential, counter: 5 },
        ),
        'counter_not_increased',
      );
    });

    it('refuses a counter of 0 once a nonzero one was seen', async () => {
      expectRefused(
        await rig.verify(
          await signToken(rig.fleet.phone, rig.binding, { counter: 0 }),
          {},
          { ...rig.credential, counter: 5 },
        ),
        'counter_not_increased',
      );
    });
  });

  describe('expiry', () => {
    it('refuses an expired token', async () => {
      expectRefused(
        await rig.verify(await signToken(rig.fleet.phone, rig.binding), { now: rig.binding.exp + 1 }),
        'expired',
      );
    });

    it('refuses a token at exactly exp', async () => {
      expectRefused(
        await rig.verify(await signToken(rig.fleet.phone, rig.binding), { now: rig.binding.exp }),
        'expired',
      );
    });

    it('accepts a token one millisecond before exp', async () => {
      expect(
        (await rig.verify(await signToken(rig.fleet.phone, rig.binding), { now: rig.binding.exp - 1 })).ok,
      ).toBe(true);
    });
  });

  describe('reuse', () => {
    it('refuses a second use of the same token', async () => {
      const token = await signToken(rig.fleet.phone, rig.binding);
      expect((await rig.verify(token)).ok).toBe(true);
      expectRefused(await rig.verify(token, {}, { ...rig.credential, counter: 0 }), 'already_used');
    });

    it('refuses a second token for the same request and decision, even with a fresh signature', async () => {
      expect((await rig.verify(await signToken(rig.fleet.phone, rig.binding))).ok).toBe(true);
      expectRefused(
        await rig.verify(
          await signToken(rig.fleet.phone, rig.binding),
          {},
          { ...rig.credential, counter: 1 },
        ),
        'already_used',
      );
    });

    it('gives exactly one success to 100 concurrent uses of one token', async () => {
      const token = await signToken(rig.fleet.phone, rig.binding);
      const results = await Promise.all(Array.from({ length: 100 }, () => rig.verify(token)));
      expect(results.filter((result) => result.ok)).toHaveLength(1);
      expect(results.filter((result) => !result.ok && result.error.code === 'already_used')).toHaveLength(99);
    });

    it('does not use up a challenge on a refused token, so the real one still passes', async () => {
      const token = await signToken(rig.fleet.phone, rig.binding);
      const forged = withSignatureByteFlipped(token, 10);
      expectRefused(await rig.verify(forged), 'bad_signature');
      expect((await rig.verify(token)).ok).toBe(true);
    });
  });
});
