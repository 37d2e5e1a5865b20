import { detailsBinding } from '../../shared/approvals/approvalBinding.ts';
import { approvalChallenge, type ApprovalBinding } from '../../shared/approvals/approvalChallenge.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import type { CapabilityToken, RequestDetails } from '../../shared/messages/approvals.ts';
import { verifyPairingCompletion, type PairedDevice } from '../../shared/pairing/verifyPairingCompletion.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import {
  completePairing,
  createHost,
  createOffer,
  createPhone,
  TEST_ORIGIN,
  TEST_RP_ID,
  type TestHost,
  type TestPhone,
} from './softwarePhone.ts';
import type { Ceremony } from './softwareAuthenticator.ts';

export const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);

/** A host with a phone paired to it, as the host's verifier sees it. */
export interface PairedFleet {
  fleet: string;
  host: TestHost;
  phone: TestPhone;
  device: PairedDevice;
}

export async function pairedFleet(options: { counter?: 'increment' | 'zero' } = {}): Promise<PairedFleet> {
  const host = await createHost();
  const phone = await createPhone('Test phone', options);
  const { offer, secret } = await createOffer(host, { now: NOW });
  const completion = await completePairing(phone, offer, secret);
  const paired = await verifyPairingCompletion(completion, offer, secret, {
    origins: [TEST_ORIGIN],
    rpId: TEST_RP_ID,
  });
  if (!paired.ok) throw paired.error;
  return { fleet: offer.fleet, host, phone, device: paired.value };
}

export function requestDetails(fleet: PairedFleet, overrides: Partial<RequestDetails> = {}): RequestDetails {
  return {
    v: PROTOCOL_VERSION,
    fleet: fleet.fleet,
    host: fleet.host.id,
    hostName: 'build-box',
    requestId: toBase64url(randomBytes(12)),
    agent: 'claude-code',
    tool: 'Bash',
    title: 'Run rm -rf build',
    detail: 'rm -rf build',
    cwd: '/home/dev/project',
    risk: 'high',
    createdAt: NOW,
    exp: NOW + 5 * 60_000,
    nonce: toBase64url(randomBytes(16)),
    salt: toBase64url(randomBytes(16)),
    shortened: false,
    ...overrides,
  };
}

export async function bindingFor(
  details: RequestDetails,
  decision: ApprovalBinding['decision'] = 'approve',
): Promise<ApprovalBinding> {
  // Another decision than approve is only ever a forged binding, for negative tests.
  return { ...(await detailsBinding(details)), decision };
}

/** What the phone does on Approve: sign the challenge of `binding` with its passkey. */
export async function signToken(
  phone: TestPhone,
  binding: ApprovalBinding,
  ceremony: Partial<Ceremony> = {},
): Promise<CapabilityToken> {
  const assertion = await phone.authenticator.assert({
    rpId: TEST_RP_ID,
    origin: TEST_ORIGIN,
    challenge: await approvalChallenge(binding),
    ...ceremony,
  });
  return {
    v: PROTOCOL_VERSION,
    fleet: binding.fleet,
    host: binding.host,
    requestId: binding.requestId,
    decision: binding.decision,
    ...(binding.grant ? { grant: binding.grant } : {}),
    device: phone.id,
    assertion,
  };
}
