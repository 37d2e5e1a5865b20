import { describe, expect, it } from 'vitest';
import { pushMessageSchema } from '../../shared/messages/pushMessages.ts';
import type { RequestList, RequestView } from '../../shared/messages/relayViews.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { createHost, createPhone } from '../../scripts/lib/softwarePhone.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import {
  bearer,
  call,
  DaemonSocket,
  denyAs,
  newFleet,
  pairPhone,
  phoneCall,
  pushService,
  sendDeny,
  setClock,
  submitRequest,
  type TestFleet,
} from './harness.ts';

const withdraw = (test: TestFleet, requestId: string, hostToken = test.hostToken) =>
  call('POST', `/v1/fleets/${test.fleet}/requests/${requestId}/withdraw`, { headers: bearer(hostToken) });

const pendingIds = async (test: TestFleet) =>
  (
    await phoneCall<RequestList>(
      test.phones[0]!.phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests?state=pending`,
    )
  ).body.requests.map((request) => request.requestId);

const viewOf = async (test: TestFleet, requestId: string) =>
  (
    await phoneCall<RequestView>(
      test.phones[0]!.phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests/${requestId}`,
    )
  ).body;

describe('a host withdrawing a request nobody waits for', () => {
  it('takes it off the phones’ pending list, shows it withdrawn, and closes its notification', async () => {
    const test = await newFleet({ phones: 2 });
    const { details } = await submitRequest(test);
    const { details: other } = await submitRequest(test);
    for (const { pushId } of test.phones) await pushService.waitForMessages(pushId!, 2);

    const reply = await withdraw(test, details.requestId);
    expect(reply).toEqual({
      status: 200,
      body: { v: 1, requestId: details.requestId, state: 'withdrawn' },
    });
    expect(await pendingIds(test)).toEqual([other.requestId]);
    expect(await viewOf(test, details.requestId)).toMatchObject({ state: 'withdrawn' });
    const recent = await phoneCall<RequestList>(
      test.phones[0]!.phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests?state=recent`,
    );
    expect(recent.body.requests.map((request) => [request.requestId, request.state])).toEqual([
      [details.requestId, 'withdrawn'],
    ]);
    // Every phone shown the notification is told to close it: none of them decided.
    for (const { pushId } of test.phones) {
      await expect
        .poll(async () =>
          (await pushService.messages(pushId!))
            .map((message) => parseJson(pushMessageSchema, message.payload))
            .filter((push) => push.ok && push.value.type === 'closed')
            .map((push) => push.ok && 'requestId' in push.value && push.value.requestId),
        )
        .toEqual([details.requestId]);
    }
  });

  it('refuses to approve or deny a withdrawn request: 409 withdrawn', async () => {
    const test = await newFleet();
    const { details } = await submitRequest(test);
    expect((await withdraw(test, details.requestId)).status).toBe(200);
    const { phone } = test.phones[0]!;
    expectRefusedReply(
      await phoneCall(
        phone,
        'POST',
        `/v1/fleets/${test.fleet}/requests/${details.requestId}/decision`,
        await signToken(phone, await bindingFor(details)),
      ),
      409,
      'withdrawn',
    );
    expectRefusedReply(await denyAs(test, test.phones[0]!.phone, details.requestId), 409, 'withdrawn');
    expectRefusedReply(await withdraw(test, details.requestId), 409, 'withdrawn');
  });

  it('still carries a report ("I didn’t expect this") of a withdrawn request to its host, once and only signed', async () => {
    const test = await newFleet();
    const daemon = await DaemonSocket.connect(test);
    await daemon.next('state');
    const { details } = await submitRequest(test);
    expect((await withdraw(test, details.requestId)).status).toBe(200);
    const { phone } = test.phones[0]!;
    const report = (key = phone.deviceKeys.privateKey) =>
      signEnvelope(
        'deny',
        { fleet: test.fleet, host: test.host.id, requestId: details.requestId, report: { scope: 'session' } },
        { role: 'device', id: phone.id },
        key,
      );
    const forger = await createPhone('Forger');
    expectRefusedReply(
      await sendDeny(test, details.requestId, await report(forger.deviceKeys.privateKey)),
      403,
      'bad_signature',
    );

    const envelope = await report();
    expect(await sendDeny(test, details.requestId, envelope)).toEqual({
      status: 200,
      body: { v: 1, state: 'withdrawn', reported: true },
    });
    expect((await daemon.next('denied')).event).toMatchObject({
      type: 'denied',
      requestId: details.requestId,
      envelope,
    });
    expectRefusedReply(await sendDeny(test, details.requestId, envelope), 401, 'replayed_nonce');
    // Nothing is decided by it: the request stays withdrawn.
    expect(await viewOf(test, details.requestId)).toMatchObject({ state: 'withdrawn' });
    daemon.close();
  });

  it('refuses a request that is no longer pending: decided 409 already_decided, expired 410 expired', async () => {
    const test = await newFleet();
    const { details: denied } = await submitRequest(test);
    expect((await denyAs(test, test.phones[0]!.phone, denied.requestId)).status).toBe(200);
    expectRefusedReply(await withdraw(test, denied.requestId), 409, 'already_decided');
    expect(await viewOf(test, denied.requestId)).toMatchObject({ state: 'denied' });

    const now = Date.now();
    const { details: due } = await submitRequest(test, { now, exp: now + 60_000 });
    await setClock(test.fleet, now + 61_000);
    expectRefusedReply(await withdraw(test, due.requestId), 410, 'expired');
  });

  it('lets a host withdraw only its own requests, and only with its token', async () => {
    const test = await newFleet();
    const { details } = await submitRequest(test);
    const { hostToken: otherToken } = await pairPhone(test.fleet, await createHost(), {
      phone: test.phones[0]!.phone,
      push: false,
    });
    expectRefusedReply(await withdraw(test, details.requestId, otherToken!), 403, 'forbidden');
    expectRefusedReply(
      await call('POST', `/v1/fleets/${test.fleet}/requests/${details.requestId}/withdraw`),
      401,
      'unauthorized',
    );
    expectRefusedReply(await withdraw(test, details.requestId, 'not-the-token'), 401, 'unauthorized');
    expectRefusedReply(await withdraw(test, 'no-such-request'), 404, 'not_found');
    expect(await pendingIds(test)).toEqual([details.requestId]);
  });
});
