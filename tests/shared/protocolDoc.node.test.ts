import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { approvalBinding } from '../../shared/approvals/approvalBinding.ts';
import { approvalChallenge } from '../../shared/approvals/approvalChallenge.ts';
import { requestHash } from '../../shared/approvals/requestHash.ts';
import { MemorySingleUseStore } from '../../shared/approvals/singleUseStore.ts';
import { verifyCapabilityToken } from '../../shared/approvals/verifyCapabilityToken.ts';
import { canonicalize } from '../../shared/canonical/canonicalize.ts';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { verifyResumeVote } from '../../shared/kill-switch/verifyResumeVote.ts';
import { MESSAGE_SCHEMAS } from '../../shared/messages/catalog.ts';
import type { ApprovalRequest, CapabilityToken, RequestDetails } from '../../shared/messages/approvals.ts';
import type { DenyEnvelope, FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import type { PairingCompletion, PairingOffer } from '../../shared/messages/pairing.ts';
import { parsePairingLink } from '../../shared/pairing/pairingLink.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import { shortCode } from '../../shared/pairing/pairingTranscript.ts';
import { verifyPairingCompletion, type PairedDevice } from '../../shared/pairing/verifyPairingCompletion.ts';
import { verifyPairingOffer } from '../../shared/pairing/verifyPairingOffer.ts';
import { parse } from '../../shared/schema/parse.ts';
import { TEST_ORIGIN, TEST_RP_ID } from '../../scripts/lib/softwarePhone.ts';

// The worked example in docs/protocol.md is real bytes: this test re-verifies every value.
const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
const examples = new Map(
  [...doc.matchAll(/```(?:json|text) example=(\w+)\n([\s\S]*?)\n```/g)].map((match) => [
    match[1]!,
    match[2]!,
  ]),
);
const json = <T>(name: string) => JSON.parse(examples.get(name)!) as T;
const text = (name: string) => examples.get(name)!;

const offer = json<PairingOffer>('PairingOffer');
const completion = json<PairingCompletion>('PairingCompletion');
const device = json<PairedDevice>('PairedDevice');
const details = json<RequestDetails>('RequestDetails');
const approvalRequest = json<ApprovalRequest>('ApprovalRequest');
const token = json<CapabilityToken>('CapabilityToken');
const secret = fromBase64url(text('PairingSecret'));
const relying = { origins: [TEST_ORIGIN], rpId: TEST_RP_ID };

describe('the worked example in docs/protocol.md', () => {
  it('has every message, each accepted by its parser', () => {
    for (const name of [
      'PairingOffer',
      'PairingCompletion',
      'RequestDetails',
      'ApprovalRequest',
      'CapabilityToken',
      'DenyEnvelope',
      'FreezeEnvelope',
      'ResumeVote',
    ]) {
      expect(parse(MESSAGE_SCHEMAS[name]!, json(name)).ok, name).toBe(true);
    }
  });

  it('pairs: the link carries the secret, the offer derives from it, the MACs hold, and the short code matches', async () => {
    const link = parsePairingLink(text('PairingLink'));
    expect(link.ok && toBase64url(link.value.secret)).toBe(text('PairingSecret'));
    const { offerId, offerToken } = await derivePairingKeys(secret);
    expect({ offerId: offer.offerId, offerToken: offer.offerToken }).toEqual({ offerId, offerToken });
    expect(await verifyPairingOffer(offer, secret)).toEqual({ ok: true, value: offer });
    expect(await verifyPairingCompletion(completion, offer, secret, relying)).toEqual({
      ok: true,
      value: device,
    });
    expect(await shortCode((await derivePairingKeys(secret)).macKey, offer, completion)).toBe(
      text('ShortCode'),
    );
  });

  it('hashes the request details as shown', async () => {
    expect(canonicalize(details)).toBe(text('CanonicalRequestDetails'));
    expect(await requestHash(details)).toBe(approvalRequest.requestHash);
  });

  it('derives the challenge as shown, and the token verifies', async () => {
    const binding = approvalBinding({ ...details, requestHash: approvalRequest.requestHash });
    expect(canonicalize({ v: 1, ...binding })).toBe(text('ChallengeInput'));
    expect(toBase64url(await approvalChallenge(binding))).toBe(text('Challenge'));
    const verified = await verifyCapabilityToken(
      token,
      { ...binding, ...relying, now: details.createdAt },
      device.credential,
      new MemorySingleUseStore(),
    );
    expect(verified.ok).toBe(true);
  });

  it('signs the deny, the freeze and the vote with the paired phone’s keys, the vote bound to that freeze', async () => {
    const publicKey = fromBase64url(device.deviceKey);
    expect((await verifyEnvelope(json<DenyEnvelope>('DenyEnvelope'), { kind: 'deny', publicKey })).ok).toBe(
      true,
    );
    expect(
      (await verifyEnvelope(json<FreezeEnvelope>('FreezeEnvelope'), { kind: 'freeze', publicKey })).ok,
    ).toBe(true);
    const freeze = json<FreezeEnvelope>('FreezeEnvelope');
    expect(await freezeId(freeze)).toBe(text('FreezeId'));
    const vote = json<ResumeVote>('ResumeVote');
    expect(
      (
        await verifyResumeVote(
          vote,
          { fleet: vote.fleet, freeze: text('FreezeId'), ...relying },
          device.credential,
        )
      ).ok,
    ).toBe(true);
  });
});
