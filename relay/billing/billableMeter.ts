/**
 * Counts the events Cloudflare bills the relay for, where the runtime bills them
 * (https://developers.cloudflare.com/durable-objects/platform/pricing/): each request into the
 * Worker; each call into a Durable Object (an RPC method on a stub, or its `fetch`); each
 * WebSocket message delivered to an object, at 20 messages to a request; each alarm. Keep-alive
 * pings answered by the runtime's auto-response reach no handler, and so are neither billed nor
 * counted.
 *
 * In memory, per isolate: `wrangler dev` runs the Worker and its objects in one isolate, so there
 * it sees everything; on Cloudflare each isolate sees its own share (use the dashboard there).
 */
export interface BillableCounts {
  workerRequests: number;
  /** RPC calls and fetches into a Durable Object. */
  objectCalls: number;
  /** WebSocket messages delivered to an object's webSocketMessage handler. */
  webSocketMessages: number;
  alarms: number;
  /**
   * Fleet objects constructed: a first start, or a wake after eviction or hibernation. Not billed
   * itself: what woke it is.
   */
  objectStarts: number;
}

/** Cloudflare bills incoming WebSocket messages to an object at 20 for one request. */
export const WEBSOCKET_MESSAGES_PER_REQUEST = 20;

/**
 * Names this isolate's counts: a reading from another isolate (a reload, say) is not comparable.
 * Drawn at the first reading, since a Worker may not draw random values at its start.
 */
let isolate: string | undefined;

const counts: BillableCounts = {
  workerRequests: 0,
  objectCalls: 0,
  webSocketMessages: 0,
  alarms: 0,
  objectStarts: 0,
};

export function countBillable(event: keyof BillableCounts): void {
  counts[event]++;
}

/** The counts so far and the billable requests they make, Workers and Durable Objects apart. */
export function meterReading() {
  isolate ??= crypto.randomUUID();
  const objectRequests =
    counts.objectCalls + counts.alarms + counts.webSocketMessages / WEBSOCKET_MESSAGES_PER_REQUEST;
  return {
    isolate,
    counts: { ...counts },
    billable: {
      workerRequests: counts.workerRequests,
      objectRequests,
      total: counts.workerRequests + objectRequests,
    },
  };
}

export type MeterReading = ReturnType<typeof meterReading>;

/**
 * A Durable Object stub whose every method call is counted: each call on a stub is its own RPC
 * session, billed as one request (`fetch` included).
 */
export function metered<Stub extends object>(stub: Stub): Stub {
  return new Proxy(stub, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        countBillable('objectCalls');
        // Called on the stub itself, as an RPC call must be.
        return (target as Record<PropertyKey, (...args: unknown[]) => unknown>)[property]!(...args);
      };
    },
  });
}
