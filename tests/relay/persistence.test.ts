import { abortAllDurableObjects } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { FleetState } from '../../shared/messages/killSwitch.ts';
import type { Members, RequestList } from '../../shared/messages/relayViews.ts';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { bearer, call, DaemonSocket, newFleet, phoneCall, submitRequest } from './harness.ts';

describe('persistence', () => {
  it('keeps requests, devices, the freeze and the event log when the object is evicted', async () => {
    const test = await newFleet({ push: false });
    const { phone } = test.phones[0]!;
    const pending = await submitRequest(test);
    const freeze = await signEnvelope(
      'freeze',
      { fleet: test.fleet, reason: 'before eviction' },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
    );
    await call('POST', `/v1/fleets/${test.fleet}/freeze`, { json: freeze });

    await abortAllDurableObjects();

    const listed = await phoneCall<RequestList>(
      phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests?state=pending`,
    );
    expect(listed.body.requests.map((request) => request.requestId)).toEqual([pending.details.requestId]);
    const members = await phoneCall<Members>(phone, 'GET', `/v1/fleets/${test.fleet}/members`);
    expect(members.body.devices.map((device) => device.id)).toEqual([phone.id]);
    const state = await call<FleetState>('GET', `/v1/fleets/${test.fleet}/state`, {
      headers: bearer(test.hostToken),
    });
    expect(state.body).toMatchObject({ frozen: true, epoch: 1, reason: 'before eviction' });

    // The pending request can still be decided, and the decision reaches a daemon.
    const daemon = await DaemonSocket.connect(test);
    const decided = await phoneCall(
      phone,
      'POST',
      `/v1/fleets/${test.fleet}/requests/${pending.details.requestId}/decision`,
      await signToken(phone, await bindingFor(pending.details)),
    );
    expect(decided.status).toBe(200);
    expect((await daemon.next('approved')).event).toMatchObject({ requestId: pending.details.requestId });
    daemon.close();
  });

  it('a request waiting while the object is evicted under a connected daemon: the daemon reconnects from its cursor and the approval still reaches it', async () => {
    const test = await newFleet({ push: false });
    const { phone } = test.phones[0]!;
    const before = await DaemonSocket.connect(test);
    const pending = await submitRequest(test);
    const cursor = (await before.next('state')).seq;

    // abortAllDurableObjects tears the instance down as an eviction does (its memory and its
    // sockets gone, its SQLite storage kept); this pool (0.15) has no gentler eviction.
    await abortAllDurableObjects();
    await before.closed;

    const after = await DaemonSocket.connect(test, `?after=${cursor}&quorum=1`);
    const decided = await phoneCall(
      phone,
      'POST',
      `/v1/fleets/${test.fleet}/requests/${pending.details.requestId}/decision`,
      await signToken(phone, await bindingFor(pending.details)),
    );
    expect(decided.status).toBe(200);
    expect((await after.next('approved')).event).toMatchObject({ requestId: pending.details.requestId });
    after.close();
  });
});
