import { describe, it } from 'vitest';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import { signToken } from '../../scripts/lib/approvalFixture.ts';
import {
  capabilityTokenRigForEachTest,
  flipByte,
  withSignatureByteFlipped,
} from '../support/capabilityTokenRig.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { createPhone } from '../../scripts/lib/softwarePhone.ts';

const rig = capabilityTokenRigForEachTest();

describe('verifyCapabilityToken', () => {
  describe('signature', () => {
    it.each([0, 7, 40, 70])('refuses a signature with byte %i flipped', async (index) => {
      const token = await signToken(rig.fleet.phone, rig.binding);
      const forged = withSignatureByteFlipped(token, index);
      expectRefused(await rig.verify(forged), 'bad_signature');
    });

    it('refuses authenticator data changed after signing (a raised counter)', async () => {
      const token = await signToken(rig.fleet.phone, rig.binding);
      const forged = {
        ...token,
        assertion: { ...token.assertion, authenticatorData: flipByte(token.assertion.authenticatorData, 36) },
      };
      expectRefused(await rig.verify(forged), 'bad_signature');
    });

    it('refuses a signature made by another credential under this one’s id', async () => {
      const intruder = await createPhone('Intruder');
      const token = await signToken(intruder, rig.binding);
      const forged = {
        ...token,
        device: rig.fleet.phone.id,
        assertion: { ...token.assertion, credentialId: rig.credential.id },
      };
      expectRefused(await rig.verify(forged), 'bad_signature');
    });

    it('refuses a credential the host never paired', async () => {
      const intruder = await createPhone('Intruder');
      expectRefused(await rig.verify(await signToken(intruder, rig.binding), {}, null), 'unknown_credential');
      // Nothing stored refuses even the paired phone's own, genuine token.
      expectRefused(
        await rig.verify(await signToken(rig.fleet.phone, rig.binding), {}, null),
        'unknown_credential',
      );
    });

    it('refuses when the stored credential is not the one the assertion names', async () => {
      const intruder = await createPhone('Intruder');
      expectRefused(await rig.verify(await signToken(intruder, rig.binding)), 'unknown_credential');
    });

    it('refuses clientDataJSON that is not JSON', async () => {
      const token = await signToken(rig.fleet.phone, rig.binding);
      const forged = {
        ...token,
        assertion: { ...token.assertion, clientDataJSON: toBase64url(utf8('not json')) },
      };
      expectRefused(await rig.verify(forged), 'malformed_client_data');
    });
  });

  describe('device', () => {
    it('refuses a token claiming another device than the passkey’s', async () => {
      const other = await createPhone('Other');
      const token = { ...(await signToken(rig.fleet.phone, rig.binding)), device: other.id };
      expectRefused(await rig.verify(token), 'device_mismatch');
    });
  });
});
