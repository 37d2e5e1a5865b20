import { env, runInDurableObject, SELF } from 'cloudflare:test';
import { beforeAll, expect, inject } from 'vitest';
import type { FleetContext } from '../../relay/fleet/context.ts';
import type { Fleet } from '../../relay/fleet/Fleet.ts';
import type { OfferIndex } from '../../relay/offers/OfferIndex.ts';
import { revokeChallenge } from '../../shared/device-auth/revokeChallenge.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { HostFrame } from '../../shared/messages/events.ts';
import { createOffer, TEST_ORIGIN, TEST_RP_ID, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';
import { bearer, RelayDriver, type Reply, type TestFleet } from '../support/relayDriver.ts';

export { bearer, type PairedPhone, type Reply, type TestFleet } from '../support/relayDriver.ts';

/** Requests go to the relay under the origin the PWA's passkeys are bound to. */
export const ORIGIN = TEST_ORIGIN;
export const pushService = new PushServiceClient(inject('pushServiceUrl'));
export const relay = new RelayDriver(ORIGIN, (url, init) => SELF.fetch(url, init), pushService);
export const { call, phoneCall, pairPhone, scanOffer, sendCompletion, newFleet, submitRequest } = relay;

/**
 * One fleet for all the tests of a file, paired before they run: the fleet, its first phone,
 * and a route under its path.
 */
export function fleetForTheseTests() {
  let made: TestFleet | undefined;
  beforeAll(async () => {
    made = await newFleet();
  });
  const fleet = (): TestFleet => {
    if (!made) throw new Error('the fleet is made in beforeAll: use it inside a test');
    return made;
  };
  return {
    fleet,
    phone: () => fleet().phones[0]!.phone,
    path: (rest: string) => `/v1/fleets/${fleet().fleet}${rest}`,
  };
}

/** An offer from the fleet's own host, filed at the relay as its daemon files it. */
export async function fileOffer(test: TestFleet): ReturnType<typeof createOffer> {
  const created = await createOffer(test.host, { fleet: test.fleet });
  const filed = await call('POST', `/v1/fleets/${test.fleet}/pairing`, {
    json: created.offer,
    headers: bearer(test.hostToken),
  });
  if (filed.status !== 201) throw new Error(`offer refused: ${JSON.stringify(filed.body)}`);
  return created;
}

/** `phone`'s signed request carrying `token` to the decision route of `requestId`. */
export function sendDecision(test: TestFleet, phone: TestPhone, requestId: string, token: unknown) {
  return phoneCall(phone, 'POST', `/v1/fleets/${test.fleet}/requests/${requestId}/decision`, token);
}

/** `phone`'s signed deny of `requestId`; another `key` or an old `now` forges or ages it. */
export function denyEnvelope(
  test: TestFleet,
  phone: TestPhone,
  requestId: string,
  key = phone.deviceKeys.privateKey,
  now?: number,
) {
  const body = { fleet: test.fleet, host: test.host.id, requestId };
  return signEnvelope('deny', body, { role: 'device', id: phone.id }, key, now);
}

/** Sends a deny envelope to the deny route of `requestId`. */
export function sendDeny(test: TestFleet, requestId: string, envelope: unknown): Promise<Reply> {
  return call('POST', `/v1/fleets/${test.fleet}/requests/${requestId}/deny`, { json: envelope });
}

/** `phone` denies `requestId` as the PWA does. */
export async function denyAs(test: TestFleet, phone: TestPhone, requestId: string): Promise<Reply> {
  return sendDeny(test, requestId, await denyEnvelope(test, phone, requestId));
}

/**
 * `phone` revokes `device` as the PWA does: its passkey's assertion over revokeChallenge, in a
 * request signed with its device key. `challengeFor` names another phone in the challenge.
 */
export async function revokeAs(test: TestFleet, phone: TestPhone, device: string, challengeFor = device) {
  const assertion = await phone.authenticator.assert({
    rpId: TEST_RP_ID,
    origin: ORIGIN,
    challenge: await revokeChallenge({ fleet: test.fleet, device: challengeFor }),
  });
  return phoneCall(phone, 'DELETE', `/v1/fleets/${test.fleet}/devices/${device}`, { v: 1, assertion });
}

/** A daemon's WebSocket, collecting frames. */
export class DaemonSocket {
  readonly frames: HostFrame[] = [];
  /** Resolves once the relay closed or broke the connection. */
  readonly closed: Promise<void>;
  readonly #socket: WebSocket;
  #waiters: (() => void)[] = [];

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    this.closed = new Promise((resolve) => {
      socket.addEventListener('close', () => resolve());
      socket.addEventListener('error', () => resolve());
    });
    socket.addEventListener('message', (event) => {
      this.frames.push(JSON.parse(event.data as string) as HostFrame);
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  static async connect(test: TestFleet, query = ''): Promise<DaemonSocket> {
    const response = await SELF.fetch(`${ORIGIN}/v1/fleets/${test.fleet}/connect${query}`, {
      headers: { upgrade: 'websocket', ...bearer(test.hostToken) },
    });
    if (!response.webSocket) throw new Error(`no WebSocket: ${response.status} ${await response.text()}`);
    response.webSocket.accept();
    return new DaemonSocket(response.webSocket);
  }

  /** The first frame whose event has this type (waiting for it if need be). */
  async next(type: HostFrame['event']['type'], timeoutMs = 3000): Promise<HostFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find((frame) => frame.event.type === type);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no ${type} frame; got ${this.frames.map((f) => f.event.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  close(): void {
    this.#socket.close(1000, 'done');
  }
}

export function fleetStub(fleet: string): DurableObjectStub<Fleet> {
  return env.FLEETS.get(env.FLEETS.idFromName(fleet));
}

/** The object that says which fleet holds the offer `offerId`. */
export function offerIndexStub(offerId: string): DurableObjectStub<OfferIndex> {
  return env.OFFERS.get(env.OFFERS.idFromName(offerId));
}

/** Makes the offer index say what a compromised relay would: that `offerId` is `fleet`'s. */
export async function pointOfferAt(offerId: string, fleet: string): Promise<void> {
  await runInDurableObject(offerIndexStub(offerId), async (_instance: OfferIndex, state) => {
    await state.storage.put('entry', { fleet, exp: Date.now() + 600_000 });
  });
}

/** Resolves once every push the fleet decided to send so far has been sent. */
export async function backgroundDone(fleet: string): Promise<void> {
  await expect
    .poll(() => runInDurableObject(fleetStub(fleet), (instance: Fleet) => instance.inFlight), {
      timeout: 10_000,
    })
    .toBe(0);
}

/** Sets the fleet object's clock; phones sign with the same clock so their requests stay fresh. */
export async function setClock(fleet: string, now: number): Promise<void> {
  await runInDurableObject(fleetStub(fleet), (instance: Fleet) => {
    instance.now = () => now;
  });
}

/**
 * A fleet's context over `sql` at a fixed `now`, that counts the rows its statements read
 * (SQLite's own count, the one Cloudflare bills): for steps run inside the fleet's object.
 */
export function countingContext(
  sql: SqlStorage,
  fleet: string,
  now: number,
): { ctx: FleetContext; rowsRead: () => number } {
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  const counting = {
    exec: (query: string, ...bindings: unknown[]) => {
      const cursor = sql.exec(query, ...bindings);
      cursors.push(cursor);
      return cursor;
    },
  } as SqlStorage;
  const ctx: FleetContext = {
    sql: counting,
    env,
    fleet,
    now: () => now,
    emit: () => {},
    closeConnections: () => {},
    background: () => {},
  };
  return { ctx, rowsRead: () => cursors.reduce((read, cursor) => read + cursor.rowsRead, 0) };
}
