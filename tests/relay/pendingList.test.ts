import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Fleet } from '../../relay/fleet/Fleet.ts';
import { listRequests, MOST_PENDING_PER_HOST } from '../../relay/fleet/requests.ts';
import { MOST_LISTED } from '../../shared/messages/relayViews.ts';
import { countingContext, fleetStub, newFleet, type TestFleet } from './harness.ts';

/** One pending request as the test wrote it: `seq` is its insertion order, as the rowid is. */
interface Written {
  requestId: string;
  host: string;
  createdAt: number;
  seq: number;
}

/**
 * Writes `pendingPerHost[i]` pending requests for host i, each paired with the fleet's phone and
 * holding a box for it, straight into the fleet's tables; creation times repeat (requests of one
 * millisecond) and interleave across hosts. Also writes what the list must leave out: expired
 * and decided requests, and a host the phone is not paired with.
 */
async function fill(test: TestFleet, pendingPerHost: readonly number[], now: number): Promise<Written[]> {
  const device = test.phones[0]!.phone.id;
  return runInDurableObject(fleetStub(test.fleet), async (_fleet: Fleet, state) => {
    const sql = state.storage.sql;
    const written: Written[] = [];
    const insert = (requestId: string, host: string, createdAt: number, exp: number, status: string) => {
      sql.exec(
        `INSERT INTO requests (request_id, host, conversation, dedup_key, risk, created_at, exp, request_hash, nonce, state)
         VALUES (?, ?, 'c', ?, 'low', ?, ?, 'hash', 'nonce', ?)`,
        requestId,
        host,
        requestId,
        createdAt,
        exp,
        status,
      );
      sql.exec(
        'INSERT INTO sealed_boxes (request_id, device, box) VALUES (?, ?, ?)',
        requestId,
        device,
        `box-${requestId}`,
      );
    };
    const strangerHost = 'host-unpaired';
    for (const [index, pending] of pendingPerHost.entries()) {
      const host = `host-${index}`;
      sql.exec('INSERT INTO pairings (host, device, created_at) VALUES (?, ?, ?)', host, device, now);
      insert(`${host}-expired`, host, now - 1, now - 1, 'pending');
      insert(`${host}-approved`, host, now - 1, now + 60_000, 'approved');
      for (let i = 0; i < pending; i++) {
        const requestId = `${host}-${i}`;
        const createdAt = now - 100_000 + ((i * 7 + index * 3) % 1000);
        insert(requestId, host, createdAt, now + 600_000, 'pending');
        written.push({ requestId, host, createdAt, seq: written.length });
      }
      insert(`${strangerHost}-${index}`, strangerHost, now, now + 600_000, 'pending');
    }
    return written;
  });
}

/**
 * What the doc comment of listRequests promises, worked out apart from the relay: each host's
 * newest first, one of each host in turn, the first MOST_LISTED of that, shown oldest first.
 */
function expectedListing(written: readonly Written[]): string[] {
  const newestFirst = (a: Written, b: Written) => b.createdAt - a.createdAt || b.seq - a.seq;
  const byHost = new Map<string, Written[]>();
  for (const request of written) byHost.set(request.host, [...(byHost.get(request.host) ?? []), request]);
  const ranked = [...byHost.values()].flatMap((own) =>
    own.sort(newestFirst).map((request, turn) => ({ request, turn })),
  );
  return ranked
    .sort((a, b) => a.turn - b.turn || newestFirst(a.request, b.request))
    .slice(0, MOST_LISTED)
    .map(({ request }) => request)
    .sort((a, b) => -newestFirst(a, b))
    .map(({ requestId }) => requestId);
}

/** The phone's pending list, read in the fleet's object, with the rows its statements read. */
async function listWithReads(test: TestFleet, now: number) {
  return runInDurableObject(fleetStub(test.fleet), async (_fleet: Fleet, state) => {
    const { ctx, rowsRead } = countingContext(state.storage.sql, test.fleet, now);
    const { requests } = listRequests(ctx, test.phones[0]!.phone.id, 'pending');
    return { requests, rowsRead: rowsRead() };
  });
}

describe('the pending list over many hosts', () => {
  it('lists each host’s newest in turn, as before, whatever each host holds', async () => {
    const test = await newFleet({ push: false });
    const now = Date.now();
    // Hosts under, at and over their share of the list, some at the cap.
    const written = await fill(test, [1, 3, 50, 80, 200, MOST_PENDING_PER_HOST, 7, 90, 400, 2, 999], now);
    const { requests } = await listWithReads(test, now);
    expect(requests.map(({ requestId }) => requestId)).toEqual(expectedListing(written));
    expect(requests.every(({ requestId, box }) => box === `box-${requestId}`)).toBe(true);
  }, 120_000);

  it.each([
    // Hosts that run out exactly at their share, when fewer places are left than hosts (review rv1).
    ['five hosts out at their share, two at the cap', [142, 142, 142, 142, 142, 1000, 1000]],
    ['600 hosts of one request and one at the cap', [...Array<number>(600).fill(1), 1000]],
  ])(
    'fills the list when hosts run out in the last turns: %s',
    async (_shape, pendingPerHost) => {
      const test = await newFleet({ push: false });
      const now = Date.now();
      const written = await fill(test, pendingPerHost, now);
      const { requests } = await listWithReads(test, now);
      expect(requests.map(({ requestId }) => requestId)).toEqual(expectedListing(written));
      expect(requests).toHaveLength(MOST_LISTED);
    },
    300_000,
  );

  it('lists a few hosts in full when they hold fewer than the list', async () => {
    const test = await newFleet({ push: false });
    const now = Date.now();
    const written = await fill(test, [5, 0, 12], now);
    const { requests } = await listWithReads(test, now);
    expect(requests.map(({ requestId }) => requestId)).toEqual(expectedListing(written));
    expect(requests).toHaveLength(17);
  });

  it.each([
    ['64 hosts at the cap', Array<number>(64).fill(MOST_PENDING_PER_HOST)],
    // A host runs out in each round of shares, and the list is shared out again.
    ['64 hosts that run out one after another', Array.from({ length: 64 }, (_, i) => 14 + i * 3)],
  ])(
    'reads rows in proportion to what it lists, not to what waits: %s',
    async (_shape, pendingPerHost) => {
      const test = await newFleet({ push: false });
      const now = Date.now();
      const written = await fill(test, pendingPerHost, now);
      const { requests, rowsRead } = await listWithReads(test, now);
      expect(requests.map(({ requestId }) => requestId)).toEqual(expectedListing(written));
      // Before: every pending request ranked with its box, 577,194 rows read at 64 × 1000.
      expect(rowsRead).toBeLessThan(3 * MOST_LISTED);
    },
    300_000,
  );
});
