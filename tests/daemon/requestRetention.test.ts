import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detailsBinding } from '../../shared/approvals/approvalBinding.ts';
import type { RequestDetails } from '../../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { REQUEST_RETENTION_MS, type RequestRecord } from '../../daemon/state/requestStore.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';
import { initMachine, newMachine, startDaemon, withStore } from '../support/latchMachine.ts';

const NOW = Date.UTC(2026, 5, 1);
const DAY_MS = 86_400_000;

let dir: string;
let store: StateStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'latch-retention-'));
  store = new StateStore(join(dir, 'state.db'));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A pending request created at `createdAt`, with its binding. */
async function pendingRequest(requestId: string, createdAt: number): Promise<RequestRecord> {
  const details: RequestDetails = {
    v: PROTOCOL_VERSION,
    fleet: 'fleet-1',
    host: 'host-1',
    hostName: 'build box',
    requestId,
    agent: 'claude-code',
    tool: 'Bash',
    title: 'git push --force',
    detail: 'git push --force origin main',
    risk: 'high',
    createdAt,
    exp: createdAt + 300_000,
    nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
    shortened: false,
  };
  return {
    requestId,
    dedupKey: requestId,
    details,
    binding: await detailsBinding(details),
    state: 'pending',
  };
}

/** Saves the request as the gate does, then settles it as `state` unless it stays pending. */
function save(store: StateStore, request: RequestRecord, state: RequestRecord['state']): void {
  store.saveRequest(request, request.details.createdAt);
  if (state !== 'pending') store.settleRequest(request.requestId, state);
}

describe('request retention', () => {
  it('keeps settled requests for 30 days', () => {
    expect(REQUEST_RETENTION_MS).toBe(30 * DAY_MS);
  });

  it('forgets settled requests past the retention, keeps recent ones and every pending one', async () => {
    const old = NOW - REQUEST_RETENTION_MS - DAY_MS;
    const recent = NOW - REQUEST_RETENTION_MS + DAY_MS;
    for (const state of ['approved', 'denied', 'expired', 'withdrawn', 'pending'] as const) {
      save(store, await pendingRequest(`old-${state}`, old), state);
      save(store, await pendingRequest(`recent-${state}`, recent), state);
    }

    store.pruneRequests(NOW);

    for (const state of ['approved', 'denied', 'expired', 'withdrawn'] as const) {
      expect(store.request(`old-${state}`)).toBeUndefined();
      expect(store.request(`recent-${state}`)?.state).toBe(state);
    }
    expect(store.request('old-pending')?.state).toBe('pending');
    expect(store.pendingRequestIds()).toEqual(['old-pending', 'recent-pending']);
  });

  it('prunes when the daemon starts', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const longAgo = await pendingRequest('long-ago-denied', Date.now() - REQUEST_RETENTION_MS - DAY_MS);
    const today = await pendingRequest('today-denied', Date.now());
    withStore(machine, (machineStore) => {
      save(machineStore, longAgo, 'denied');
      save(machineStore, today, 'denied');
    });

    const daemon = await startDaemon(machine);
    await daemon.stop();

    withStore(machine, (machineStore) => {
      expect(machineStore.request('long-ago-denied')).toBeUndefined();
      expect(machineStore.request('today-denied')?.state).toBe('denied');
    });
  }, 60_000);
});
