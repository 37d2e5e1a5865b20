import { approvalBinding } from '../../shared/approvals/approvalBinding.ts';
import { approvalChallenge } from '../../shared/approvals/approvalChallenge.ts';
import { requestHash } from '../../shared/approvals/requestHash.ts';
import { openRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import type {
  ApprovalRequest,
  CapabilityToken,
  Grant,
  RequestDetails,
} from '../../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';

/**
 * What the phone does with a request: open its box, check the hash, sign with its passkey; with
 * `grant`, the rule the request offers too (docs/policy.md#grants); with `counter`, the signature
 * counter a copy of the passkey would report.
 */
export async function phoneApproves(
  phone: TestPhone,
  request: ApprovalRequest,
  origin: string,
  overrides: { requestId?: string; grant?: Grant; counter?: number } = {},
): Promise<{ token: CapabilityToken; details: RequestDetails }> {
  const grant = overrides.grant ? { grant: overrides.grant } : {};
  const box = request.sealed.find((sealed) => sealed.device === phone.id)!.box;
  const context = {
    fleet: request.fleet,
    host: request.host,
    requestId: request.requestId,
    device: phone.id,
  };
  const opened = await openRequestDetails(
    box,
    { privateKey: phone.ecdhKeys.privateKey, publicKeyRaw: phone.ecdhKeyRaw },
    context,
  );
  if (!opened.ok) throw opened.error;
  const details = opened.value;
  if ((await requestHash(details)) !== request.requestHash)
    throw new Error('the request hash does not match its details');
  const binding = approvalBinding({ ...details, requestHash: request.requestHash }, overrides.grant);
  const assertion = await phone.authenticator.assert({
    rpId: new URL(origin).hostname,
    origin,
    challenge: await approvalChallenge(binding),
    ...(overrides.counter === undefined ? {} : { counter: overrides.counter }),
  });
  return {
    details,
    token: {
      v: PROTOCOL_VERSION,
      fleet: request.fleet,
      host: request.host,
      requestId: overrides.requestId ?? request.requestId,
      decision: 'approve',
      ...grant,
      device: phone.id,
      assertion,
    },
  };
}
