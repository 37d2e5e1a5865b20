import { describe, expect, it } from 'vitest';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { createHost, createPhone } from '../../scripts/lib/softwarePhone.ts';
import {
  call,
  denyAs,
  denyEnvelope,
  fleetForTheseTests,
  newFleet,
  pairPhone,
  sendDecision,
  sendDeny,
  submitRequest,
} from './harness.ts';

const { fleet, phone, path } = fleetForTheseTests();

describe('phone routes', () => {
  it('refuses a decision without the device signature', async () => {
    const { details } = await submitRequest(fleet());
    const token = await signToken(phone(), await bindingFor(details));
    expectRefusedReply(
      await call('POST', path(`/requests/${details.requestId}/decision`), { json: token }),
      401,
      'missing_field',
    );
  });

  it('refuses a token for another request on this request’s route', async () => {
    const { details } = await submitRequest(fleet());
    const other = await submitRequest(fleet());
    const token = await signToken(phone(), await bindingFor(other.details));
    expectRefusedReply(
      await sendDecision(fleet(), phone(), details.requestId, token),
      400,
      'context_mismatch',
    );
  });

  it('refuses a token whose challenge is not this request’s', async () => {
    const { details } = await submitRequest(fleet());
    const token = await signToken(phone(), { ...(await bindingFor(details)), nonce: 'A'.repeat(22) });
    expectRefusedReply(
      await sendDecision(fleet(), phone(), details.requestId, token),
      403,
      'challenge_mismatch',
    );
  });

  it('refuses a token without user verification', async () => {
    const { details } = await submitRequest(fleet());
    const token = await signToken(phone(), await bindingFor(details), { userVerified: false });
    expectRefusedReply(
      await sendDecision(fleet(), phone(), details.requestId, token),
      403,
      'user_not_verified',
    );
  });

  it('refuses a deny token on the decision route', async () => {
    const { details } = await submitRequest(fleet());
    const token = await signToken(phone(), await bindingFor(details, 'deny'));
    expectRefusedReply(await sendDecision(fleet(), phone(), details.requestId, token), 400, 'invalid_field');
  });

  it('answers a second decision with 409 already_decided', async () => {
    const { details } = await submitRequest(fleet());
    const binding = await bindingFor(details);
    expect(
      (await sendDecision(fleet(), phone(), details.requestId, await signToken(phone(), binding))).status,
    ).toBe(200);
    expectRefusedReply(
      await sendDecision(fleet(), phone(), details.requestId, await signToken(phone(), binding)),
      409,
      'already_decided',
    );
    const deny = await denyEnvelope(fleet(), phone(), details.requestId);
    expectRefusedReply(await sendDeny(fleet(), details.requestId, deny), 409, 'already_decided');
  });

  it('refuses a deny with a bad signature, a stale time, or a replayed nonce', async () => {
    const { details } = await submitRequest(fleet());
    const forged = await denyEnvelope(
      fleet(),
      phone(),
      details.requestId,
      (await createPhone()).deviceKeys.privateKey,
    );
    expectRefusedReply(await sendDeny(fleet(), details.requestId, forged), 403, 'bad_signature');
    const stale = await denyEnvelope(
      fleet(),
      phone(),
      details.requestId,
      phone().deviceKeys.privateKey,
      Date.now() - 61_000,
    );
    expectRefusedReply(await sendDeny(fleet(), details.requestId, stale), 401, 'stale_timestamp');
    const fresh = await denyEnvelope(fleet(), phone(), details.requestId);
    const other = await submitRequest(fleet());
    const forOther = await denyEnvelope(fleet(), phone(), other.details.requestId);
    expectRefusedReply(await sendDeny(fleet(), details.requestId, forOther), 400, 'context_mismatch');
    expect((await sendDeny(fleet(), details.requestId, fresh)).status).toBe(200);
  });

  it('refuses a decision and a deny from a phone of the fleet that is not paired with the request’s host', async () => {
    const test = await newFleet({ push: false });
    const owner = test.phones[0]!.phone;
    // Another host of the same fleet, and a phone paired with that host only.
    const otherHost = await createHost();
    const { hostToken: otherHostToken } = await pairPhone(test.fleet, otherHost, {
      phone: owner,
      push: false,
    });
    const { paired: outsider } = await pairPhone(test.fleet, otherHost, {
      hostToken: otherHostToken!,
      push: false,
    });
    const { details } = await submitRequest(test);
    // A genuine token and deny, signed by the outsider's own passkey and device key.
    const token = await signToken(outsider.phone, await bindingFor(details));
    expectRefusedReply(await sendDecision(test, outsider.phone, details.requestId, token), 404, 'not_found');
    expectRefusedReply(await denyAs(test, outsider.phone, details.requestId), 404, 'not_found');
    // The request still waits for a phone of its host.
    const approved = await sendDecision(
      test,
      owner,
      details.requestId,
      await signToken(owner, await bindingFor(details)),
    );
    expect(approved).toEqual({ status: 200, body: { v: 1, state: 'approved' } });
  });

  it('stores the passkey’s counter after an approval: a clone still at that counter is refused', async () => {
    const test = await newFleet({ push: false });
    const owner = test.phones[0]!.phone;
    const first = await submitRequest(test);
    const approved = await sendDecision(
      test,
      owner,
      first.details.requestId,
      await signToken(owner, await bindingFor(first.details), { counter: 7 }),
    );
    expect(approved.status).toBe(200);
    const second = await submitRequest(test);
    const cloned = await signToken(owner, await bindingFor(second.details), { counter: 7 });
    expectRefusedReply(
      await sendDecision(test, owner, second.details.requestId, cloned),
      403,
      'counter_not_increased',
    );
  });
});
