import { describe, expect, it } from 'vitest';
import type { HostEvent, HostFrame } from '../../shared/messages/events.ts';
import { FleetLog, type FleetLogHandlers } from '../../daemon/relay/fleetLog.ts';

const expired = (seq: number, requestId: string): HostFrame => ({
  v: 1,
  seq,
  event: { v: 1, type: 'expired', requestId, at: 1_700_000_000_000 },
});

/** A FleetLog whose `expired` handler runs `onExpired`, with its cursor and log lines kept. */
function fleetLogWith(onExpired: (event: Extract<HostEvent, { type: 'expired' }>) => void) {
  const cursor = { seq: 0, writes: [] as number[] };
  const lines: string[] = [];
  const never = () => {
    throw new Error('not in this test');
  };
  const handlers: FleetLogHandlers = {
    state: never,
    approved: never,
    denied: never,
    expired: onExpired,
    grant_revoked: never,
    device_revoked: never,
    frozen: never,
    resumed: never,
    paired: never,
  };
  const log = new FleetLog(
    handlers,
    {
      read: () => cursor.seq,
      write: (seq) => {
        cursor.seq = seq;
        cursor.writes.push(seq);
      },
    },
    (line) => lines.push(line),
  );
  return { log, cursor, lines };
}

describe('the fleet log, when an event’s handler fails', () => {
  it('tries the event again until it is handled, the later events waiting, and the cursor never passes it', async () => {
    const handled: string[] = [];
    let failuresLeft = 2;
    const { log, cursor, lines } = fleetLogWith(({ requestId }) => {
      if (requestId === 'r-2' && failuresLeft-- > 0) throw new Error('SQLITE_FULL: database or disk is full');
      handled.push(requestId);
    });
    log.receive(expired(1, 'r-1'));
    log.receive(expired(2, 'r-2'));
    log.receive(expired(3, 'r-3'));
    await log.settled();

    expect(handled).toEqual(['r-1', 'r-2', 'r-3']);
    expect(cursor.writes).toEqual([1, 2, 3]);
    expect(lines).toEqual([
      'the expired event (seq 2) failed: SQLITE_FULL: database or disk is full; trying it again in 250 ms',
      'the expired event (seq 2) failed: SQLITE_FULL: database or disk is full; trying it again in 500 ms',
    ]);
  });

  it('gives up at stop(), leaving the cursor before the event, which a restart replays', async () => {
    const handled: string[] = [];
    const { log, cursor, lines } = fleetLogWith(({ requestId }) => {
      if (requestId === 'r-2') throw new Error('a handler that always fails');
      handled.push(requestId);
    });
    log.receive(expired(1, 'r-1'));
    log.receive(expired(2, 'r-2'));
    log.receive(expired(3, 'r-3'));
    while (lines.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    log.stop();
    await log.settled();

    expect(handled).toEqual(['r-1']);
    expect(cursor.seq).toBe(1);
  });
});
