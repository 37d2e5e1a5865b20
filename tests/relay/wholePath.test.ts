import { runDurableObjectAlarm } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Fleet } from '../../relay/fleet/Fleet.ts';
import { MemorySingleUseStore } from '../../shared/approvals/singleUseStore.ts';
import { verifyCapabilityToken } from '../../shared/approvals/verifyCapabilityToken.ts';
import { openRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { pushMessageSchema } from '../../shared/messages/pushMessages.ts';
import type { RequestList } from '../../shared/messages/relayViews.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { TEST_RP_ID } from '../../scripts/lib/softwarePhone.ts';
import {
  call,
  DaemonSocket,
  fleetStub,
  newFleet,
  ORIGIN,
  phoneCall,
  pushService,
  setClock,
  submitRequest,
} from './harness.ts';

describe('the whole path through the relay', () => {
  it('pairs, pushes the sealed request, takes the approval, and hands the daemon a token it verifies', async () => {
    const test = await newFleet();
    const [{ phone, device, pushId }] = test.phones as [(typeof test.phones)[0]];
    const daemon = await DaemonSocket.connect(test);
    expect((await daemon.next('state')).event).toMatchObject({
      type: 'state',
      state: { frozen: false, epoch: 0 },
    });

    const { details, reply } = await submitRequest(test);
    expect(reply).toEqual({ status: 201, body: { v: 1, requestId: details.requestId, joined: false } });

    // The push left the relay, passed the stand-in's VAPID check, and decrypts to our message.
    const [push] = await pushService.waitForMessages(pushId!, 1);
    const message = parseJson(pushMessageSchema, push!.payload);
    expect(message.ok && message.value).toMatchObject({
      type: 'request',
      fleet: test.fleet,
      requestId: details.requestId,
    });
    // It carries the sealed details, which only the phone opens.
    const box = message.ok && message.value.type === 'request' ? message.value.box : undefined;
    const context = { fleet: test.fleet, host: test.host.id, requestId: details.requestId, device: phone.id };
    expect(
      await openRequestDetails(
        box!,
        { privateKey: phone.ecdhKeys.privateKey, publicKeyRaw: phone.ecdhKeyRaw },
        context,
      ),
    ).toEqual({ ok: true, value: details });
    expect(push!.payload).not.toContain('rm -rf');

    // The phone approves with its passkey.
    const binding = await bindingFor(details);
    const token = await signToken(phone, binding);
    const decided = await phoneCall(
      phone,
      'POST',
      `/v1/fleets/${test.fleet}/requests/${details.requestId}/decision`,
      token,
    );
    expect(decided).toEqual({ status: 200, body: { v: 1, state: 'approved' } });

    // The daemon receives the token at once, and verifies it with its own keys.
    const approved = await daemon.next('approved');
    expect(approved.event).toMatchObject({ type: 'approved', requestId: details.requestId });
    const received = approved.event.type === 'approved' ? approved.event.token : token;
    const verified = await verifyCapabilityToken(
      received,
      { ...binding, origins: [ORIGIN], rpId: TEST_RP_ID },
      device.credential,
      new MemorySingleUseStore(),
    );
    expect(verified.ok).toBe(true);

    const listed = await phoneCall<RequestList>(
      phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests?state=recent`,
    );
    expect(listed.body.requests).toEqual([
      expect.objectContaining({
        requestId: details.requestId,
        state: 'approved',
        decision: 'approve',
        decidedBy: phone.id,
      }),
    ]);
    daemon.close();
  });

  it('pushes the id alone when the sealed box would not fit in 3993 bytes, and the phone fetches the box', async () => {
    const test = await newFleet();
    const { phone, pushId } = test.phones[0]!;
    const { details } = await submitRequest(test, { detail: 'x'.repeat(3900) });
    const [push] = await pushService.waitForMessages(pushId!, 1);
    expect(JSON.parse(push!.payload)).toEqual({
      v: 1,
      type: 'request',
      fleet: test.fleet,
      requestId: details.requestId,
    });
    const fetched = await phoneCall<{ box: string }>(
      phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests/${details.requestId}`,
    );
    const context = { fleet: test.fleet, host: test.host.id, requestId: details.requestId, device: phone.id };
    expect(
      await openRequestDetails(
        fetched.body.box,
        { privateKey: phone.ecdhKeys.privateKey, publicKeyRaw: phone.ecdhKeyRaw },
        context,
      ),
    ).toEqual({ ok: true, value: details });
  });

  it('carries a deny signed by the device key to the daemon', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const daemon = await DaemonSocket.connect(test);
    const { details } = await submitRequest(test);
    const envelope = await signEnvelope(
      'deny',
      { fleet: test.fleet, host: test.host.id, requestId: details.requestId },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
    );
    expect(
      await call('POST', `/v1/fleets/${test.fleet}/requests/${details.requestId}/deny`, { json: envelope }),
    ).toEqual({ status: 200, body: { v: 1, state: 'denied' } });
    expect((await daemon.next('denied')).event).toMatchObject({
      type: 'denied',
      requestId: details.requestId,
      envelope,
    });
    daemon.close();
  });

  it('carries a deny and report to the daemon as signed, and refuses a report of an unknown scope', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const daemon = await DaemonSocket.connect(test);
    const { details } = await submitRequest(test);
    const route = `/v1/fleets/${test.fleet}/requests/${details.requestId}/deny`;
    const body = { fleet: test.fleet, host: test.host.id, requestId: details.requestId };
    const unknownScope = {
      ...(await signEnvelope('deny', body, { role: 'device', id: phone.id }, phone.deviceKeys.privateKey)),
      body: { ...body, report: { scope: 'everything' } },
    };
    expect(await call('POST', route, { json: unknownScope })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_field' } },
    });
    const envelope = await signEnvelope(
      'deny',
      { ...body, report: { scope: 'session' } },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
    );
    expect(await call('POST', route, { json: envelope })).toEqual({
      status: 200,
      body: { v: 1, state: 'denied', reported: true },
    });
    // The daemon gets the very envelope, report and signature included, to verify itself.
    expect((await daemon.next('denied')).event).toMatchObject({ type: 'denied', envelope });
    daemon.close();
  });

  it('expires an unanswered request at its deadline and tells the daemon', async () => {
    const test = await newFleet();
    const daemon = await DaemonSocket.connect(test);
    const { details } = await submitRequest(test);
    await setClock(test.fleet, details.exp);
    expect(await runDurableObjectAlarm(fleetStub(test.fleet) as DurableObjectStub<Fleet>)).toBe(true);
    expect((await daemon.next('expired')).event).toMatchObject({
      type: 'expired',
      requestId: details.requestId,
    });
    daemon.close();
  });

  it('replays to a reconnecting daemon every decision it missed, after its cursor', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const first = await DaemonSocket.connect(test);
    const state = await first.next('state');
    first.close();

    const missed = await submitRequest(test);
    await phoneCall(
      phone,
      'POST',
      `/v1/fleets/${test.fleet}/requests/${missed.details.requestId}/decision`,
      await signToken(phone, await bindingFor(missed.details)),
    );

    const again = await DaemonSocket.connect(test, `?after=${state.seq}`);
    expect((await again.next('approved')).event).toMatchObject({ requestId: missed.details.requestId });
    again.close();
  });

  it('replays the whole log to a daemon whose cursor is beyond it (a reset relay, or forged frames)', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const decided = await submitRequest(test);
    await phoneCall(
      phone,
      'POST',
      `/v1/fleets/${test.fleet}/requests/${decided.details.requestId}/decision`,
      await signToken(phone, await bindingFor(decided.details)),
    );
    const ahead = await DaemonSocket.connect(test, '?after=1000000');
    const state = await ahead.next('state');
    expect(state.seq).toBeLessThan(1_000_000);
    expect((await ahead.next('approved')).event).toMatchObject({ requestId: decided.details.requestId });
    ahead.close();
  });

  it('joins a duplicate to the pending request instead of asking twice', async () => {
    const test = await newFleet();
    const first = await submitRequest(test, { dedupKey: 'session-1.toolu_42' });
    const second = await submitRequest(test, { dedupKey: 'session-1.toolu_42' });
    expect(second.reply).toEqual({
      status: 200,
      body: { v: 1, requestId: first.details.requestId, joined: true },
    });
    const pending = await phoneCall<RequestList>(
      test.phones[0]!.phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests?state=pending`,
    );
    expect(pending.body.requests.map((request) => request.requestId)).toEqual([first.details.requestId]);
  });
});
