import { describe, expect, it } from 'vitest';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { capabilityTokenSchema } from '../../shared/messages/approvals.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { signToken } from '../../scripts/lib/approvalFixture.ts';
import { capabilityTokenRigForEachTest } from '../support/capabilityTokenRig.ts';
import { expectRefused } from '../support/expectRefused.ts';

const rig = capabilityTokenRigForEachTest();

describe('verifyCapabilityToken', () => {
  describe('wire form', () => {
    const wire = async (edit: (token: Record<string, unknown>) => void) => {
      const token = JSON.parse(JSON.stringify(await signToken(rig.fleet.phone, rig.binding)));
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
