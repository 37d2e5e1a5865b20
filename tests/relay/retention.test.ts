import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import type { Fleet } from '../../relay/fleet/Fleet.ts';
import { appendEvent, EVENT_RETENTION_MS } from '../../relay/fleet/events.ts';
import { RECENT_MS } from '../../relay/fleet/requests.ts';
import { PRUNE_EVERY_MS } from '../../relay/fleet/retention.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import type { HostEvent } from '../../shared/messages/events.ts';
import {
  DaemonSocket,
  fleetStub,
  newFleet,
  sendDecision,
  setClock,
  submitRequest,
  type TestFleet,
} from './harness.ts';

const DAY_MS = 24 * 3600_000;

/** Runs `query` in the fleet's own storage. */
function stored<T>(test: TestFleet, query: string, ...bindings: unknown[]): Promise<T[]> {
  return runInDurableObject(fleetStub(test.fleet), (_instance: Fleet, state) =>
    state.storage.sql.exec(query, ...bindings).toArray(),
  ) as Promise<T[]>;
}

const alarmOf = (test: TestFleet) =>
  runInDurableObject(fleetStub(test.fleet), (_instance: Fleet, state) => state.storage.getAlarm());

/** The fleet's phone approves a request it was sent. */
async function decideOnPhone(test: TestFleet, details: RequestDetails) {
  const phone = test.phones[0]!.phone;
  const token = await signToken(phone, await bindingFor(details));
  expect((await sendDecision(test, phone, details.requestId, token)).status).toBe(200);
}

async function approve(test: TestFleet, exp?: number) {
  const { details } = await submitRequest(test, exp === undefined ? {} : { exp });
  await decideOnPhone(test, details);
  return details;
}

/** Runs the fleet's alarm, setting one first if none is (events logged here set none). */
async function runAlarm(test: TestFleet): Promise<void> {
  await runInDurableObject(fleetStub(test.fleet), async (_instance: Fleet, state) => {
    if ((await state.storage.getAlarm()) === null) await state.storage.setAlarm(Date.now() + DAY_MS);
  });
  expect(await runDurableObjectAlarm(fleetStub(test.fleet))).toBe(true);
}

/** Logs an event as the fleet does, `at` a given time. */
function logEvent(test: TestFleet, event: HostEvent, at: number) {
  return runInDurableObject(fleetStub(test.fleet), (_instance: Fleet, state) =>
    appendEvent(state.storage.sql, null, event, at),
  );
}

describe("the relay's retention", () => {
  it('moves the alarm off the deadline of a request decided before it, to the day its row may go', async () => {
    const test = await newFleet();
    const details = await approve(test);
    expect(await alarmOf(test)).toBe(Math.ceil((details.exp + RECENT_MS) / PRUNE_EVERY_MS) * PRUNE_EVERY_MS);
  });

  it('keeps the alarm on the deadline of a request still pending', async () => {
    const test = await newFleet();
    const { details } = await submitRequest(test);
    expect(await alarmOf(test)).toBe(details.exp);
  });

  it('brings the alarm forward for a new request due sooner, and leaves it for one due later', async () => {
    const test = await newFleet();
    const now = Date.now();
    await submitRequest(test, { exp: now + 10 * 60_000 });
    const { details: sooner } = await submitRequest(test, { exp: now + 5 * 60_000 });
    await submitRequest(test, { exp: now + 20 * 60_000 });
    expect(await alarmOf(test)).toBe(sooner.exp);
  });

  it('moves the alarm only when the request decided is the one it stood at', async () => {
    const test = await newFleet();
    const now = Date.now();
    const { details: first } = await submitRequest(test, { exp: now + 5 * 60_000 });
    const { details: second } = await submitRequest(test, { exp: now + 10 * 60_000 });
    await decideOnPhone(test, second);
    expect(await alarmOf(test)).toBe(first.exp);
    await decideOnPhone(test, first);
    expect(await alarmOf(test)).toBe(Math.ceil((first.exp + RECENT_MS) / PRUNE_EVERY_MS) * PRUNE_EVERY_MS);
  });

  it('prunes a settled request and its boxes a day after its deadline, and keeps one settled later', async () => {
    const test = await newFleet();
    const old = await approve(test);
    const recent = await approve(test, old.exp + 60_000);
    await setClock(test.fleet, old.exp + RECENT_MS);
    await runAlarm(test);
    const ids = await stored<{ request_id: string }>(test, 'SELECT request_id FROM requests');
    expect(ids.map((row) => row.request_id)).toEqual([recent.requestId]);
    const boxes = await stored<{ request_id: string }>(test, 'SELECT request_id FROM sealed_boxes');
    expect(boxes.map((row) => row.request_id)).toEqual([recent.requestId]);
  });

  it('prunes events past the retention but the newest freeze and resume, and numbers on from the last', async () => {
    const test = await newFleet();
    const start = Date.now();
    const resumed = (n: number) =>
      ({ v: 1, type: 'resumed', freezeId: `freeze-${n}`, votes: [] }) as unknown as HostEvent;
    const frozen = { v: 1, type: 'frozen', envelope: { n: 2 } } as unknown as HostEvent;
    const expired = (id: string) => ({ v: 1, type: 'expired', requestId: id, at: start }) as HostEvent;
    await logEvent(test, expired('a'), start);
    await logEvent(test, resumed(1), start);
    const keptFreeze = await logEvent(test, frozen, start);
    const keptResume = await logEvent(test, resumed(2), start);
    const last = await logEvent(test, expired('b'), start);
    const young = await logEvent(test, expired('c'), start + DAY_MS);
    await setClock(test.fleet, start + EVENT_RETENTION_MS);
    await runAlarm(test);
    const seqs = await stored<{ seq: number }>(test, 'SELECT seq FROM events ORDER BY seq');
    expect(seqs.map((row) => row.seq)).toEqual([keptFreeze.seq, keptResume.seq, young.seq]);
    // The young event's day comes: the log is empty of all but the two kept, and its numbering
    // goes on, so a daemon at the last number is not taken for one beyond the log.
    await setClock(test.fleet, start + DAY_MS + EVENT_RETENTION_MS);
    await runAlarm(test);
    const daemon = await DaemonSocket.connect(test, `?after=${young.seq}`);
    try {
      expect((await daemon.next('state')).seq).toBe(young.seq);
      expect(young.seq).toBeGreaterThan(last.seq);
    } finally {
      daemon.close();
    }
  });

  it('replays the kept freeze and resume to a daemon whose cursor is older than the pruned events', async () => {
    const test = await newFleet();
    const start = Date.now();
    const frozen = { v: 1, type: 'frozen', envelope: { n: 1 } } as unknown as HostEvent;
    const resumed = { v: 1, type: 'resumed', freezeId: 'freeze-1', votes: [] } as unknown as HostEvent;
    await logEvent(test, { v: 1, type: 'expired', requestId: 'a', at: start } as HostEvent, start);
    await logEvent(test, frozen, start);
    await logEvent(test, resumed, start);
    await setClock(test.fleet, start + EVENT_RETENTION_MS);
    await runAlarm(test);
    const daemon = await DaemonSocket.connect(test, '?after=0');
    try {
      await daemon.next('resumed');
      expect(daemon.frames.map((frame) => frame.event.type)).toEqual(['state', 'frozen', 'resumed']);
    } finally {
      daemon.close();
    }
  });

  it('clears the alarm once nothing waits and nothing settled is kept', async () => {
    const test = await newFleet();
    const details = await approve(test);
    await setClock(test.fleet, details.exp + EVENT_RETENTION_MS + DAY_MS);
    await runAlarm(test);
    expect(await stored(test, 'SELECT request_id FROM requests')).toEqual([]);
    expect(await stored(test, 'SELECT seq FROM events')).toEqual([]);
    expect(await alarmOf(test)).toBeNull();
  });
});
