import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Fleet } from '../../relay/fleet/Fleet.ts';
import { MOST_PENDING_PER_HOST } from '../../relay/fleet/requests.ts';
import { decidePush, HOUR_MS, PUSH_CAPS, pushCapsFrom, type PushHistory } from '../../relay/push/pushCaps.ts';
import { pushMessageSchema } from '../../shared/messages/pushMessages.ts';
import type { RequestList } from '../../shared/messages/relayViews.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import {
  backgroundDone,
  fleetStub,
  newFleet,
  phoneCall,
  pushService,
  submitRequest,
  type TestFleet,
} from './harness.ts';

/** A clock the test moves and the fleet object reads: they share an isolate. */
const clock = { now: Date.now() };

async function driveClock(test: TestFleet): Promise<void> {
  clock.now = Date.now();
  await runInDurableObject(fleetStub(test.fleet), (instance: Fleet) => {
    instance.now = () => clock.now;
  });
}

/**
 * Sends `count` requests, `spacingMs` apart on the fleet's clock, over `conversations`
 * conversations. After the first, they go straight to the fleet object's RPC method, as the
 * Worker's route does: the test harness's SELF.fetch slows down with every call
 * (workers-sdk#15446), which would make a thousand requests take minutes.
 */
async function flood(
  test: TestFleet,
  count: number,
  spacingMs: number,
  conversations: number,
): Promise<string[]> {
  const { request } = await submitRequest(test, { now: clock.now, conversation: 'warm-up' });
  const ids: string[] = [request.requestId];
  const stub = fleetStub(test.fleet);
  for (let i = 1; i < count; i++) {
    clock.now += spacingMs;
    const requestId = `flood-${i}`;
    const created = await stub.createRequest(test.fleet, test.hostToken, {
      ...request,
      requestId,
      dedupKey: requestId,
      conversation: `session-${i % conversations}`,
      exp: clock.now + 10 * 60_000,
    });
    expect(created).toEqual({ ok: true, value: { v: 1, requestId, joined: false } });
    ids.push(requestId);
  }
  return ids;
}

const kinds = async (test: TestFleet) =>
  (await pushService.messages(test.phones[0]!.pushId!)).map((message) => {
    const parsed = parseJson(pushMessageSchema, message.payload);
    if (!parsed.ok) return 'unparsable';
    const push = parsed.value;
    return push.type === 'request'
      ? push.requestId
      : push.type === 'summary'
        ? `summary:${push.pending}`
        : `closed:${push.requestId}`;
  });

describe('push caps', () => {
  it('sends exactly what the caps allow for 1,000 requests in a minute, with one summary, and lists all 1,000', async () => {
    const test = await newFleet();
    await driveClock(test);
    // 1,000 requests over 50 s, across 4 conversations (the first request is conversation "warm-up").
    const ids = await flood(test, 1000, 50, 4);

    // Pushes: the first 10 (the host's minute cap; no conversation had more than 3), then the
    // 31st request of the hour becomes the summary (of 31 pending), then silence.
    const expected = [...ids.slice(0, 10), 'summary:31'];
    expect(await pushService.waitForMessages(test.phones[0]!.pushId!, expected.length)).toHaveLength(
      expected.length,
    );
    await backgroundDone(test.fleet); // nothing more may arrive
    expect((await kinds(test)).sort()).toEqual(expected.sort());

    const listed = await phoneCall<RequestList>(
      test.phones[0]!.phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests?state=pending`,
      undefined,
      clock.now,
    );
    expect(listed.body.requests).toHaveLength(1000);
    expect(await pushService.rejected()).toEqual([]);

    // A host holds no more pending: the storage a host can fill is bounded.
    expect(ids).toHaveLength(MOST_PENDING_PER_HOST);
    expectRefusedReply((await submitRequest(test, { now: clock.now })).reply, 429, 'too_many_requests');
  });

  it('holds one conversation to 3 pushes a minute', async () => {
    const test = await newFleet();
    await driveClock(test);
    const ids = await flood(test, 20, 1000, 1);
    // "warm-up" is its own conversation; the other 19 share one, of which 3 are pushed.
    expect(await pushService.waitForMessages(test.phones[0]!.pushId!, 4)).toHaveLength(4);
    await backgroundDone(test.fleet);
    expect((await kinds(test)).sort()).toEqual([ids[0], ids[1], ids[2], ids[3]].sort());
  });

  it('pushes again an hour after the summary', async () => {
    const test = await newFleet();
    await driveClock(test);
    await flood(test, 40, 10, 4);
    await pushService.waitForMessages(test.phones[0]!.pushId!, 11);
    clock.now += HOUR_MS + 1;
    const { details } = await submitRequest(test, { now: clock.now, conversation: 'later' });
    const messages = await pushService.waitForMessages(test.phones[0]!.pushId!, 12);
    expect(messages.map((message) => message.payload).at(-1)).toContain(details.requestId);
  });

  it('forgets a subscription the push service says is gone', async () => {
    const test = await newFleet();
    const pushId = test.phones[0]!.pushId!;
    await pushService.markGone(pushId);
    await submitRequest(test);
    const deadline = Date.now() + 3000;
    let endpoint: string | null = 'pending';
    while (endpoint !== null && Date.now() < deadline) {
      endpoint = await runInDurableObject(fleetStub(test.fleet), (_instance: Fleet, state) => {
        return state.storage.sql
          .exec<{ push_endpoint: string | null }>('SELECT push_endpoint FROM devices')
          .one().push_endpoint;
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(endpoint).toBeNull();
  });
});

describe('decidePush', () => {
  const quiet: PushHistory = {
    lastSummaryAt: undefined,
    requestsLastHour: 0,
    hostPushesLastMinute: 0,
    conversationPushesLastMinute: 0,
  };
  const now = 1_800_000_000_000;

  it.each<[string, Partial<PushHistory>, ReturnType<typeof decidePush>]>([
    ['a quiet host', {}, 'push'],
    [
      'the third push of a conversation this minute',
      { conversationPushesLastMinute: 2, hostPushesLastMinute: 2 },
      'push',
    ],
    [
      'a fourth push of a conversation this minute',
      { conversationPushesLastMinute: 3, hostPushesLastMinute: 3 },
      'silent',
    ],
    ['an eleventh push of a host this minute', { hostPushesLastMinute: 10 }, 'silent'],
    ['the 30th request of the hour', { requestsLastHour: 29 }, 'push'],
    ['the 31st request of the hour', { requestsLastHour: 30, hostPushesLastMinute: 10 }, 'summary'],
    ['a request 59 minutes after a summary', { lastSummaryAt: now - HOUR_MS + 60_000 }, 'silent'],
    ['a request an hour after a summary', { lastSummaryAt: now - HOUR_MS }, 'push'],
  ])('answers %s with %s', (_what, history, expected) => {
    expect(decidePush({ ...quiet, ...history }, now)).toBe(expected);
  });
});

describe('pushCapsFrom', () => {
  it('reads an operator’s caps, and keeps design.md’s for anything malformed', () => {
    expect(pushCapsFrom('5,20,100')).toEqual({
      perConversationPerMinute: 5,
      perHostPerMinute: 20,
      perHostPerHour: 100,
    });
    for (const setting of [undefined, '', '5,20', '5,20,x', '0,1,1', '1.5,2,3'])
      expect(pushCapsFrom(setting)).toEqual(PUSH_CAPS);
  });
});
