import { beforeEach, describe, expect, it } from 'vitest';
import { resumeChallenge } from '../../shared/kill-switch/resumeChallenge.ts';
import { verifyResumeVote } from '../../shared/kill-switch/verifyResumeVote.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { approvalChallenge } from '../../shared/approvals/approvalChallenge.ts';
import { bindingFor, pairedFleet, requestDetails, type PairedFleet } from '../support/approvalFixture.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { TEST_ORIGIN, TEST_RP_ID } from '../support/phone.ts';

let fleet: PairedFleet;
const EPOCH = 7;

beforeEach(async () => {
  fleet = await pairedFleet();
});

async function vote(epoch: number, challenge?: Uint8Array): Promise<ResumeVote> {
  const assertion = await fleet.phone.authenticator.assert({
    rpId: TEST_RP_ID,
    origin: TEST_ORIGIN,
    challenge: challenge ?? (await resumeChallenge({ fleet: fleet.fleet, epoch })),
  });
  return { v: PROTOCOL_VERSION, fleet: fleet.fleet, epoch, device: fleet.phone.id, assertion };
}

const expected = () => ({ fleet: fleet.fleet, epoch: EPOCH, origins: [TEST_ORIGIN], rpId: TEST_RP_ID });

describe('verifyResumeVote', () => {
  it('accepts a vote bound to the current freeze', async () => {
    const result = await verifyResumeVote(await vote(EPOCH), expected(), fleet.device.credential);
    expect(result).toEqual({ ok: true, value: { device: fleet.phone.id, counter: 1 } });
  });

  it('refuses a vote cast in an earlier freeze', async () => {
    expectRefused(
      await verifyResumeVote(await vote(EPOCH - 1), expected(), fleet.device.credential),
      'stale_epoch',
    );
  });

  it('refuses a vote relabelled with the current epoch', async () => {
    const old = await vote(EPOCH - 1);
    expectRefused(
      await verifyResumeVote({ ...old, epoch: EPOCH }, expected(), fleet.device.credential),
      'challenge_mismatch',
    );
  });

  it('refuses an approval token offered as a vote', async () => {
    const approval = await approvalChallenge(await bindingFor(requestDetails(fleet)));
    expectRefused(
      await verifyResumeVote(await vote(EPOCH, approval), expected(), fleet.device.credential),
      'challenge_mismatch',
    );
  });

  it('refuses a vote from a passkey the host never paired', async () => {
    expectRefused(await verifyResumeVote(await vote(EPOCH), expected(), undefined), 'unknown_credential');
  });

  it('refuses a vote claiming another device', async () => {
    const spoofed = { ...(await vote(EPOCH)), device: 'another-device' };
    expectRefused(await verifyResumeVote(spoofed, expected(), fleet.device.credential), 'device_mismatch');
  });
});
