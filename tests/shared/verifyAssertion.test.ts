import { describe, expect, it } from 'vitest';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import { attempt } from '../../shared/errors.ts';
import { verifyAssertion } from '../../shared/webauthn/verifyAssertion.ts';
import { approvalChallenge } from '../../shared/approvals/approvalChallenge.ts';
import { signToken } from '../../scripts/lib/approvalFixture.ts';
import { TEST_ORIGIN, TEST_RP_ID } from '../../scripts/lib/softwarePhone.ts';
import { capabilityTokenRigForEachTest } from '../support/capabilityTokenRig.ts';
import { expectRefused } from '../support/expectRefused.ts';

// The guards of verifyAssertion that the wire schema of a token never lets through, called
// directly, as a verifier that takes assertions from elsewhere would.
const rig = capabilityTokenRigForEachTest();

async function verifyWith(edit: (assertion: Record<string, string>) => void) {
  const { assertion } = await signToken(rig.fleet.phone, rig.binding);
  const edited: Record<string, string> = { ...assertion };
  edit(edited);
  const expected = {
    challenge: await approvalChallenge(rig.binding),
    origins: [TEST_ORIGIN],
    rpId: TEST_RP_ID,
  };
  return attempt(() => verifyAssertion(edited as typeof assertion, expected, rig.credential));
}

describe('verifyAssertion', () => {
  it('accepts the assertion as signed, and returns its counter', async () => {
    expect(await verifyWith(() => {})).toEqual({ ok: true, value: { counter: 1 } });
  });

  it.each(['[]', 'null', '"webauthn.get"', '1', '{'])('refuses clientDataJSON %s', async (json) => {
    expectRefused(
      await verifyWith((assertion) => (assertion['clientDataJSON'] = toBase64url(utf8(json)))),
      'malformed_client_data',
    );
  });

  it('refuses authenticator data shorter than 37 bytes', async () => {
    expectRefused(
      await verifyWith((assertion) => (assertion['authenticatorData'] = toBase64url(new Uint8Array(36)))),
      'malformed_authenticator_data',
    );
  });

  it('refuses a credential id other than the paired one', async () => {
    expectRefused(
      await verifyWith((assertion) => (assertion['credentialId'] = toBase64url(new Uint8Array(16)))),
      'unknown_credential',
    );
  });
});
