import { beforeEach, describe, expect, it } from 'vitest';
import { approvalChallenge } from '../../shared/approvals/approvalChallenge.ts';
import { canonicalize } from '../../shared/canonical/canonicalize.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { sha256, utf8 } from '../../shared/encoding/bytes.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { resumeChallenge } from '../../shared/kill-switch/resumeChallenge.ts';
import { verifyResumeVote } from '../../shared/kill-switch/verifyResumeVote.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import {
  bindingFor,
  pairedFleet,
  requestDetails,
  type PairedFleet,
} from '../../scripts/lib/approvalFixture.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { TEST_ORIGIN, TEST_RP_ID } from '../../scripts/lib/softwarePhone.ts';

let fleet: PairedFleet;
/** The freeze in force, and the one before it. */
let current: string;
let earlier: string;

const freezeBy = (reason: string): Promise<FreezeEnvelope> =>
  signEnvelope(
    'freeze',
    { fleet: fleet.fleet, reason },
    { role: 'device', id: fleet.phone.id },
    fleet.phone.deviceKeys.privateKey,
  );

beforeEach(async () => {
  fleet = await pairedFleet();
  earlier = await freezeId(await freezeBy('first incident'));
  current = await freezeId(await freezeBy('second incident'));
});

async function vote(freeze: string, challenge?: Uint8Array): Promise<ResumeVote> {
  const assertion = await fleet.phone.authenticator.assert({
    rpId: TEST_RP_ID,
    origin: TEST_ORIGIN,
    challenge: challenge ?? (await resumeChallenge({ fleet: fleet.fleet, freeze })),
  });
  return { v: PROTOCOL_VERSION, fleet: fleet.fleet, freeze, device: fleet.phone.id, assertion };
}

const expected = () => ({ fleet: fleet.fleet, freeze: current, origins: [TEST_ORIGIN], rpId: TEST_RP_ID });

describe('freezeId', () => {
  it('is base64url SHA-256 of the envelope’s canonical JSON without its signature, the same however its members are ordered', async () => {
    const envelope = await freezeBy('prod incident 412');
    const reordered = Object.fromEntries(Object.entries(envelope).reverse()) as FreezeEnvelope;
    const { sig: _signature, ...signed } = envelope;
    expect(await freezeId(reordered)).toBe(toBase64url(await sha256(utf8(canonicalize(signed)))));
    expect(await freezeId(reordered)).toBe(await freezeId(envelope));
  });

  it('differs for two freezes with the same signer and reason', async () => {
    expect(await freezeId(await freezeBy('same'))).not.toBe(await freezeId(await freezeBy('same')));
  });
});

describe('verifyResumeVote', () => {
  it('accepts a vote bound to the freeze in force', async () => {
    const result = await verifyResumeVote(await vote(current), expected(), fleet.device.credential);
    expect(result).toEqual({ ok: true, value: { device: fleet.phone.id, counter: 1 } });
  });

  it('refuses a vote cast for an earlier freeze', async () => {
    expectRefused(
      await verifyResumeVote(await vote(earlier), expected(), fleet.device.credential),
      'stale_freeze',
    );
  });

  it('refuses a vote for an earlier freeze relabelled with the one in force', async () => {
    const old = await vote(earlier);
    expectRefused(
      await verifyResumeVote({ ...old, freeze: current }, expected(), fleet.device.credential),
      'challenge_mismatch',
    );
  });

  it('refuses a vote labelled with another fleet, even one signed for this freeze', async () => {
    expectRefused(
      await verifyResumeVote(
        { ...(await vote(current)), fleet: 'another-fleet' },
        expected(),
        fleet.device.credential,
      ),
      'stale_freeze',
    );
  });

  it('refuses a vote for another fleet’s freeze', async () => {
    const elsewhere = await vote(current, await resumeChallenge({ fleet: 'another-fleet', freeze: current }));
    expectRefused(
      await verifyResumeVote(elsewhere, expected(), fleet.device.credential),
      'challenge_mismatch',
    );
  });

  it('refuses an approval token offered as a vote', async () => {
    const approval = await approvalChallenge(await bindingFor(requestDetails(fleet)));
    expectRefused(
      await verifyResumeVote(await vote(current, approval), expected(), fleet.device.credential),
      'challenge_mismatch',
    );
  });

  it('refuses a vote from a passkey the host never paired', async () => {
    expectRefused(await verifyResumeVote(await vote(current), expected(), undefined), 'unknown_credential');
  });

  it('refuses a vote claiming another device', async () => {
    const spoofed = { ...(await vote(current)), device: 'another-device' };
    expectRefused(await verifyResumeVote(spoofed, expected(), fleet.device.credential), 'device_mismatch');
  });
});
