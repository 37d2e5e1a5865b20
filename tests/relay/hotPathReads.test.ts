import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { FleetContext } from '../../relay/fleet/context.ts';
import { consumeNonce } from '../../relay/fleet/deviceAuth.ts';
import type { Fleet } from '../../relay/fleet/Fleet.ts';
import { notifyNewRequest } from '../../relay/fleet/notify.ts';
import { scheduleAlarm } from '../../relay/fleet/retention.ts';
import { countingContext, fleetStub, newFleet, type TestFleet } from './harness.ts';

/** Rows in each table the hot path reads: what a busy fleet holds after minutes of traffic. */
const FLOOD = 5000;
/** What one step may read whatever the tables hold: index seeks, and counts up to a cap. */
const BOUNDED_READS = 100;

/**
 * Runs `step` in the fleet's object over tables flooded with FLOOD rows each, and returns how
 * many rows its statements read (SQLite's own count, the one Cloudflare bills).
 */
async function rowsReadBy(
  test: TestFleet,
  step: (ctx: FleetContext, storage: DurableObjectStorage) => unknown,
): Promise<number> {
  return runInDurableObject(fleetStub(test.fleet), async (_fleet: Fleet, state) => {
    const now = Date.now();
    const sql = state.storage.sql;
    for (let i = 0; i < FLOOD; i++) {
      sql.exec('INSERT INTO nonces (nonce, expires_at) VALUES (?, ?)', `flood-${i}`, now + 600_000);
      // Pushes of the last minute: over the host's cap, so the request is held back (silent).
      sql.exec(
        "INSERT INTO push_log (host, conversation, kind, at) VALUES (?, 'flood', 'push', ?)",
        test.host.id,
        now - 1000,
      );
      sql.exec(
        'INSERT INTO events (host, event, at) VALUES (?, ?, ?)',
        test.host.id,
        '{"type":"approved"}',
        now,
      );
      sql.exec(
        `INSERT INTO requests (request_id, host, conversation, dedup_key, risk, created_at, exp, request_hash, nonce, state)
         VALUES (?, ?, 'flood', ?, 'low', ?, ?, 'hash', 'nonce', 'approved')`,
        `flood-${i}`,
        test.host.id,
        `flood-${i}`,
        now,
        now + 300_000,
      );
    }
    const { ctx, rowsRead } = countingContext(sql, test.fleet, now);
    await step(ctx, state.storage);
    return rowsRead();
  });
}

describe('the hot path reads by index, whatever the tables hold', () => {
  it('checks a nonce without reading the nonces of the past ten minutes', async () => {
    const test = await newFleet({ push: false });
    expect(await rowsReadBy(test, (ctx) => expect(consumeNonce(ctx, 'fresh-nonce')).toBe(true))).toBeLessThan(
      BOUNDED_READS,
    );
  });

  it('weighs a new request against the push caps without reading the whole push log', async () => {
    const test = await newFleet({ push: false });
    const reads = await rowsReadBy(test, (ctx) =>
      notifyNewRequest(ctx, { requestId: 'flood-new', host: test.host.id, conversation: 'flood' }),
    );
    expect(reads).toBeLessThan(BOUNDED_READS);
  });

  it('sets the alarm without reading every event and settled request', async () => {
    const test = await newFleet({ push: false });
    expect(await rowsReadBy(test, (ctx, storage) => scheduleAlarm(storage, ctx))).toBeLessThan(BOUNDED_READS);
  });
});
