import { runDurableObjectAlarm } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Fleet } from '../../relay/fleet/Fleet.ts';
import { closesByPush } from '../../relay/push/closesByPush.ts';
import { pushMessageSchema, type PushMessage } from '../../shared/messages/pushMessages.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import {
  backgroundDone,
  denyAs,
  fleetStub,
  newFleet,
  phoneCall,
  pushService,
  setClock,
  submitRequest,
  type PairedPhone,
} from './harness.ts';

/** What one phone's push service received, parsed. */
async function pushes(phone: PairedPhone): Promise<PushMessage[]> {
  return (await pushService.messages(phone.pushId!)).map((message) => {
    const parsed = parseJson(pushMessageSchema, message.payload);
    if (!parsed.ok) throw new Error(`an unparsable push: ${message.payload}`);
    return parsed.value;
  });
}

const closes = async (phone: PairedPhone) =>
  (await pushes(phone)).filter((push) => push.type === 'closed').map((push) => push.requestId);

/** Waits until the phone's push service holds a close for `requestId`. */
async function waitForClose(phone: PairedPhone, requestId: string): Promise<void> {
  await expect.poll(() => closes(phone), { timeout: 10_000 }).toContain(requestId);
}

/** A fleet of two phones and one pushed request, whose notification both phones received. */
async function pushedToBoth() {
  const test = await newFleet({ phones: 2 });
  const [a, b] = test.phones as [PairedPhone, PairedPhone];
  const { details } = await submitRequest(test);
  for (const phone of [a, b]) await pushService.waitForMessages(phone.pushId!, 1);
  return { test, a, b, details };
}

describe('closing a notification when its request stops waiting', () => {
  it('tells the other phone, and not the one that denied, naming the request and nothing else', async () => {
    const { test, a, b, details } = await pushedToBoth();
    expect((await denyAs(test, a.phone, details.requestId)).status).toBe(200);

    await waitForClose(b, details.requestId);
    const received = await pushService.messages(b.pushId!);
    expect(JSON.parse(received.at(-1)!.payload)).toEqual({
      v: 1,
      type: 'closed',
      fleet: test.fleet,
      requestId: details.requestId,
    });
    await backgroundDone(test.fleet);
    expect(await closes(a)).toEqual([]);
  });

  it('tells the other phone when a request is approved', async () => {
    const { test, a, b, details } = await pushedToBoth();
    const approved = await phoneCall(
      a.phone,
      'POST',
      `/v1/fleets/${test.fleet}/requests/${details.requestId}/decision`,
      await signToken(a.phone, await bindingFor(details)),
    );
    expect(approved.status).toBe(200);
    await waitForClose(b, details.requestId);
    await backgroundDone(test.fleet);
    expect(await closes(a)).toEqual([]);
  });

  it('tells every phone when a request expires unanswered', async () => {
    const { test, a, b, details } = await pushedToBoth();
    await setClock(test.fleet, details.exp);
    expect(await runDurableObjectAlarm(fleetStub(test.fleet) as DurableObjectStub<Fleet>)).toBe(true);
    await waitForClose(a, details.requestId);
    await waitForClose(b, details.requestId);
  });

  it('sends no second close when a later answer is refused as already_decided', async () => {
    const { test, a, b, details } = await pushedToBoth();
    expect((await denyAs(test, a.phone, details.requestId)).status).toBe(200);
    await waitForClose(b, details.requestId);

    const late = await denyAs(test, b.phone, details.requestId);
    expectRefusedReply(late, 409, 'already_decided');
    await backgroundDone(test.fleet);
    expect(await closes(a)).toEqual([]);
    expect(await closes(b)).toEqual([details.requestId]);
  });

  it('sends no close for a request whose notification the caps held back', async () => {
    const test = await newFleet({ phones: 2 });
    const [a, b] = test.phones as [PairedPhone, PairedPhone];
    // Three a minute per conversation: the fourth request of one conversation is listed, not pushed.
    const sent = [];
    for (let n = 0; n < 4; n++) sent.push((await submitRequest(test, { conversation: 'one' })).details);
    const [first, , , held] = sent as [(typeof sent)[0], unknown, unknown, (typeof sent)[0]];
    await pushService.waitForMessages(b.pushId!, 3);

    expect((await denyAs(test, a.phone, held.requestId)).status).toBe(200);
    expect((await denyAs(test, a.phone, first.requestId)).status).toBe(200);
    await waitForClose(b, first.requestId);
    await backgroundDone(test.fleet);
    expect(await closes(b)).toEqual([first.requestId]);
  });

  it('never sends a close to Apple’s push service, which ends subscriptions whose pushes show nothing', () => {
    expect(closesByPush('https://fcm.googleapis.com/fcm/send/abc')).toBe(true);
    expect(closesByPush('https://updates.push.services.mozilla.com/wpush/v2/abc')).toBe(true);
    expect(closesByPush('http://127.0.0.1:9/push/abc')).toBe(true);
    expect(closesByPush('https://web.push.apple.com/QGx1')).toBe(false);
    expect(closesByPush('https://api.push.apple.com/QGx1')).toBe(false);
    expect(closesByPush('not a url')).toBe(false);
  });
});
