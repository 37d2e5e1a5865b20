import { env, runDurableObjectAlarm, SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { app } from '../../relay/app.ts';
import type { MeterReading } from '../../relay/billing/billableMeter.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import {
  backgroundDone,
  bearer,
  fleetForTheseTests,
  fleetStub,
  ORIGIN,
  sendDecision,
  submitRequest,
} from './harness.ts';

const { fleet, phone } = fleetForTheseTests();

async function readMeter(): Promise<MeterReading> {
  const response = await SELF.fetch(`${ORIGIN}/v1/meter`);
  expect(response.status).toBe(200);
  return (await response.json()) as MeterReading;
}

/** What was counted while `action` ran. */
async function countedDuring(action: () => Promise<unknown>): Promise<MeterReading> {
  const before = await readMeter();
  await action();
  const after = await readMeter();
  const difference = <T extends Record<string, number>>(a: T, b: T) =>
    Object.fromEntries(Object.keys(a).map((key) => [key, a[key]! - b[key]!])) as T;
  expect(after.isolate).toBe(before.isolate);
  return {
    isolate: after.isolate,
    counts: difference(after.counts, before.counts),
    billable: difference(after.billable, before.billable),
  };
}

/** A daemon's raw WebSocket, its frames kept as text (a "pong" is no JSON frame). */
async function rawDaemonSocket(): Promise<{ socket: WebSocket; next: () => Promise<string> }> {
  const response = await SELF.fetch(`${ORIGIN}/v1/fleets/${fleet().fleet}/connect`, {
    headers: { upgrade: 'websocket', ...bearer(fleet().hostToken) },
  });
  const socket = response.webSocket!;
  const received: string[] = [];
  const waiting: ((text: string) => void)[] = [];
  socket.addEventListener('message', (event) => {
    const text = event.data as string;
    const wake = waiting.shift();
    if (wake) wake(text);
    else received.push(text);
  });
  socket.accept();
  const next = () => {
    const first = received.shift();
    return first !== undefined
      ? Promise.resolve(first)
      : new Promise<string>((resolve) => waiting.push(resolve));
  };
  return { socket, next };
}

const NOTHING = { workerRequests: 0, objectCalls: 0, webSocketMessages: 0, alarms: 0 };

describe('the billable-event meter', () => {
  it('counts one Worker request and one object call for each of a create and a decide', async () => {
    const counted = await countedDuring(async () => {
      const { details } = await submitRequest(fleet());
      const token = await signToken(phone(), await bindingFor(details));
      expect((await sendDecision(fleet(), phone(), details.requestId, token)).status).toBe(200);
      await backgroundDone(fleet().fleet);
    });
    expect(counted.counts).toMatchObject({ ...NOTHING, workerRequests: 2, objectCalls: 2 });
    expect(counted.billable).toEqual({ workerRequests: 2, objectRequests: 2, total: 4 });
  });

  it('counts nothing for a keep-alive ping the runtime answers itself', async () => {
    const { socket, next } = await rawDaemonSocket();
    try {
      expect(JSON.parse(await next())).toMatchObject({ event: { type: 'state' } });
      const counted = await countedDuring(async () => {
        for (let i = 0; i < 3; i++) {
          socket.send('ping');
          expect(await next()).toBe('pong');
        }
      });
      expect(counted.counts).toMatchObject(NOTHING);
      expect(counted.billable.total).toBe(0);
    } finally {
      socket.close(1000, 'done');
    }
  });

  it('counts a message the object itself receives at a twentieth of a request', async () => {
    const { socket, next } = await rawDaemonSocket();
    try {
      await next();
      const counted = await countedDuring(async () => {
        const before = (await readMeter()).counts.webSocketMessages;
        socket.send('not a ping');
        // The object takes the message in its own time (a ping sent after it may be answered
        // first, by the runtime): wait until it has counted it.
        await expect.poll(async () => (await readMeter()).counts.webSocketMessages).toBe(before + 1);
      });
      expect(counted.counts).toMatchObject({ ...NOTHING, webSocketMessages: 1 });
      expect(counted.billable.objectRequests).toBeCloseTo(1 / 20);
    } finally {
      socket.close(1000, 'done');
    }
  });

  it('counts an alarm as an object request', async () => {
    await submitRequest(fleet());
    const counted = await countedDuring(() => runDurableObjectAlarm(fleetStub(fleet().fleet)));
    expect(counted.counts).toMatchObject({ ...NOTHING, alarms: 1 });
    expect(counted.billable).toEqual({ workerRequests: 0, objectRequests: 1, total: 1 });
  });

  it('is an unknown route where the operator did not turn it on', async () => {
    for (const BILLABLE_METER of [undefined, 'off', 'true']) {
      const response = await app.request(`${ORIGIN}/v1/meter`, {}, { ...env, BILLABLE_METER });
      expectRefusedReply({ status: response.status, body: await response.json() }, 404, 'not_found');
    }
  });

  it('counts its own reading as nothing', async () => {
    const counted = await countedDuring(() => readMeter());
    expect(counted.billable.total).toBe(0);
  });
});
