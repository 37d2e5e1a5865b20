import { detailsBinding } from '../../shared/approvals/approvalBinding.ts';
import { approvalChallenge } from '../../shared/approvals/approvalChallenge.ts';
import { openRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import type { CapabilityToken, RequestDetails } from '../../shared/messages/approvals.ts';
import type { RequestList, RequestView } from '../../shared/messages/relayViews.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import type { RelayDriver } from './relayDriver.ts';

/** What a software phone does with a request at the real relay: fetch it, open its box. */
export async function openAtRelay(
  driver: RelayDriver,
  phone: TestPhone,
  fleet: string,
  requestId: string,
): Promise<{ view: RequestView; details: RequestDetails }> {
  const view = (
    await driver.phoneCall<RequestView>(phone, 'GET', `/v1/fleets/${fleet}/requests/${requestId}`)
  ).body;
  return { view, details: await openBox(phone, { fleet, host: view.host, requestId }, view.box!) };
}

/** Opens a request's sealed box with the phone's key, from the relay or from a push. */
export async function openBox(
  phone: TestPhone,
  request: { fleet: string; host: string; requestId: string },
  box: string,
): Promise<RequestDetails> {
  const opened = await openRequestDetails(
    box,
    { privateKey: phone.ecdhKeys.privateKey, publicKeyRaw: phone.ecdhKeyRaw },
    { ...request, device: phone.id },
  );
  if (!opened.ok) throw opened.error;
  return opened.value;
}

/** The phone signs its approval of exactly these details: the capability token. */
export async function tokenFor(
  driver: RelayDriver,
  phone: TestPhone,
  details: RequestDetails,
): Promise<CapabilityToken> {
  const binding = await detailsBinding(details);
  const assertion = await phone.authenticator.assert({
    rpId: driver.rpId,
    origin: driver.origin,
    challenge: await approvalChallenge(binding),
  });
  return {
    v: PROTOCOL_VERSION,
    fleet: details.fleet,
    host: details.host,
    requestId: details.requestId,
    decision: 'approve',
    device: phone.id,
    assertion,
  };
}

/** Posts a phone's decision to the relay, as the app's Approve button does. */
export function decideAtRelay(driver: RelayDriver, phone: TestPhone, token: CapabilityToken) {
  return driver.phoneCall(
    phone,
    'POST',
    `/v1/fleets/${token.fleet}/requests/${token.requestId}/decision`,
    token,
  );
}

/** Waits for a pending request whose opened details match, and decides it from `phone`. */
export async function decidePendingAtRelay(
  driver: RelayDriver,
  phone: TestPhone,
  fleet: string,
  matches: (details: RequestDetails) => boolean,
  decision: 'approve' | 'deny' = 'approve',
  timeoutMs = 15_000,
): Promise<RequestDetails> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await driver.phoneCall<RequestList>(phone, 'GET', `/v1/fleets/${fleet}/requests`);
    for (const request of list.body.requests ?? []) {
      const { details } = await openAtRelay(driver, phone, fleet, request.requestId);
      if (!matches(details)) continue;
      const decided =
        decision === 'approve'
          ? await decideAtRelay(driver, phone, await tokenFor(driver, phone, details))
          : await driver.phoneCall(
              phone,
              'POST',
              `/v1/fleets/${fleet}/requests/${details.requestId}/deny`,
              await signEnvelope(
                'deny',
                { fleet, host: details.host, requestId: details.requestId },
                { role: 'device', id: phone.id },
                phone.deviceKeys.privateKey,
              ),
            );
      if (decided.status !== 200)
        throw new Error(`the relay refused the ${decision}: ${JSON.stringify(decided.body)}`);
      return details;
    }
    if (Date.now() > deadline) throw new Error('no matching request reached the phone');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
