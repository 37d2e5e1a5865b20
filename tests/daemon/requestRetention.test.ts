import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detailsBinding } from '../../shared/approvals/approvalBinding.ts';
import type { Grant, RequestDetails } from '../../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { GrantStore, type StoredGrant } from '../../daemon/grants/grantStore.ts';
import type { RequestRecord } from '../../daemon/state/requestStore.ts';
import { pruneState } from '../../daemon/state/pruneState.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';
import {
  auditLines,
  hookInput,
  initMachine,
  newMachine,
  startDaemon,
  startHook,
  withStore,
  type LatchMachine,
} from '../support/latchMachine.ts';
import { restartDaemon, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { phoneApproves } from '../support/phoneApproves.ts';

const NOW = Date.UTC(2026, 5, 1);
const DAY_MS = 86_400_000;
/** The default `[retention] requests_days`. */
const RETENTION_MS = 30 * DAY_MS;
/** The default `[retention]`. */
const RETENTION = { requestsDays: 30, maxRequests: 10_000 };

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
    salt: 'BBBBBBBBBBBBBBBBBBBBBB',
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
  it('forgets settled requests past the retention, keeps recent ones and every pending one', async () => {
    const old = NOW - RETENTION_MS - DAY_MS;
    const recent = NOW - RETENTION_MS + DAY_MS;
    for (const state of ['approved', 'denied', 'expired', 'withdrawn', 'pending'] as const) {
      save(store, await pendingRequest(`old-${state}`, old), state);
      save(store, await pendingRequest(`recent-${state}`, recent), state);
    }

    pruneState(store, RETENTION, NOW);

    for (const state of ['approved', 'denied', 'expired', 'withdrawn'] as const) {
      expect(store.request(`old-${state}`)).toBeUndefined();
      expect(store.request(`recent-${state}`)?.state).toBe(state);
    }
    expect(store.request('old-pending')?.state).toBe('pending');
    expect(store.pendingRequestIds()).toEqual(['old-pending', 'recent-pending']);
  });

  it('takes a fractional retention as it is: 0.001 days is 86.4 s', async () => {
    save(store, await pendingRequest('87-s-ago', NOW - 87_000), 'denied');
    save(store, await pendingRequest('86-s-ago', NOW - 86_000), 'denied');
    pruneState(store, { ...RETENTION, requestsDays: 0.001 }, NOW);
    expect(store.request('87-s-ago')).toBeUndefined();
    expect(store.request('86-s-ago')?.state).toBe('denied');
  });

  it('forgets grants that expired or were revoked before the retention, never one in force', () => {
    const grants = new GrantStore(store.db);
    // A grant is in force only while the phone that allowed it is trusted here.
    store.db
      .prepare(
        `INSERT INTO devices (id, name, device_key, ecdh_key, credential_id, credential_key, counter, paired_at)
           VALUES ('phone-1', 'Phone', 'k', 'e', 'c', 'ck', 0, ?)`,
      )
      .run(NOW - RETENTION_MS - 3 * DAY_MS);
    const grant = (id: string, expiresAt: number): StoredGrant => ({
      id,
      kind: 'session',
      similar: { tool: 'Bash', words: ['ls'], thenAnyName: false, folder: '/srv', policyRule: 'ask' },
      risk: 'low',
      session: 'conversation-1',
      device: 'phone-1',
      requestId: `request-${id}`,
      createdAt: NOW - RETENTION_MS - 2 * DAY_MS,
      expiresAt,
    });
    grants.add(grant('expired-long-ago', NOW - RETENTION_MS - DAY_MS));
    grants.add(grant('expired-lately', NOW - DAY_MS));
    grants.add(grant('revoked-long-ago', NOW + DAY_MS));
    grants.add(grant('in-force', NOW + DAY_MS));
    grants.revoke({ id: 'revoked-long-ago' }, NOW - RETENTION_MS - DAY_MS);

    pruneState(store, RETENTION, NOW);

    const left = store.db.prepare('SELECT id FROM grants ORDER BY id').all() as { id: string }[];
    expect(left.map(({ id }) => id)).toEqual(['expired-lately', 'in-force']);
    expect(grants.live(NOW).map(({ id }) => id)).toEqual(['in-force']);
  });

  it('forgets old votes toward ended freezes, never those toward the freeze in force, and keeps every freeze', () => {
    const longAgo = NOW - RETENTION_MS - DAY_MS;
    store.applyFreeze({ id: 'freeze-ended', reason: 'r', cause: 'relay', signedAt: longAgo }, longAgo);
    store.countResumeVote('freeze-ended', 'phone-1', longAgo);
    store.applyFreeze({ id: 'freeze-in-force', reason: 'r', cause: 'relay', signedAt: longAgo }, longAgo);
    store.countResumeVote('freeze-in-force', 'phone-1', longAgo);

    pruneState(store, RETENTION, NOW);

    const votes = store.db.prepare('SELECT freeze FROM resume_votes').all() as { freeze: string }[];
    expect(votes.map(({ freeze }) => freeze)).toEqual(['freeze-in-force']);
    // The ended freeze is still known, so a relay replaying it is ignored.
    expect(store.freezeEnded('freeze-ended')).toBe(true);
  });

  it('keeps a used token until a day after its deadline, then forgets it', () => {
    const now = Date.now();
    expect(store.consume('token-past-its-day', now - DAY_MS - 60_000)).toBe(true);
    expect(store.consume('token-within-its-day', now - DAY_MS + 60_000)).toBe(true);
    // Each use forgets what is a day past its deadline: the first may be "used" again, since
    // the token verifier refuses it as `expired` before it ever asks; the second may not.
    expect(store.consume('token-within-its-day', now - DAY_MS + 60_000)).toBe(false);
    expect(store.consume('token-past-its-day', now - DAY_MS - 60_000)).toBe(true);
  });

  /** The ids of the settled requests kept, by deadline. */
  const settledIds = () =>
    (
      store.db
        .prepare("SELECT request_id FROM requests WHERE state != 'pending' ORDER BY expires_at, request_id")
        .all() as { request_id: string }[]
    ).map(({ request_id }) => request_id);

  it('keeps the max_requests settled requests with the latest deadlines, every pending one and every one a report can still name', async () => {
    const ids = (prefix: string, count: number) =>
      Array.from({ length: count }, (_, index) => `${prefix}-${String(index).padStart(3, '0')}`);
    // 150 settled more than a day past their deadlines (no report names them), in order.
    const past = ids('past', 150);
    for (const [index, id] of past.entries())
      save(store, await pendingRequest(id, NOW - 2 * DAY_MS + index), index % 2 ? 'denied' : 'withdrawn');
    // One pending since long ago; one settled whose deadline passed an hour ago.
    save(store, await pendingRequest('pending-long-ago', NOW - 2 * DAY_MS), 'pending');
    save(store, await pendingRequest('in-flight', NOW - 3_900_000), 'denied');

    pruneState(store, { ...RETENTION, maxRequests: 100 }, NOW);

    // A hundred settled in all, the one a report can name among them.
    expect(settledIds()).toEqual([...past.slice(51), 'in-flight']);
    expect(store.pendingRequestIds()).toEqual(['pending-long-ago']);
  });

  it('prunes by max_requests no settled request a report can still name, up to twice the cap', async () => {
    // Its call may still be in flight, or a phone's report of it still come (a day after).
    for (let index = 0; index < 120; index++)
      save(store, await pendingRequest(`in-flight-${String(index)}`, NOW - DAY_MS + index), 'withdrawn');
    pruneState(store, { ...RETENTION, maxRequests: 100 }, NOW);
    expect(settledIds()).toHaveLength(120);
  });

  it('keeps no more than twice max_requests settled, deadlines still to come or not', async () => {
    // A flood of calls settled at once (relay unreachable, say), each with a day to run.
    const flood = Array.from({ length: 250 }, (_, index) => `flood-${String(index).padStart(3, '0')}`);
    for (const [index, id] of flood.entries())
      save(store, await pendingRequest(id, NOW - 1000 + index), 'denied');
    store.db.prepare('UPDATE requests SET expires_at = expires_at + ?').run(DAY_MS);
    pruneState(store, { ...RETENTION, maxRequests: 100 }, NOW);
    expect(settledIds()).toEqual(flood.slice(50));
  });

  it('keeps an approval a report can still name, however many others come after it', async () => {
    // The report of it ends the rule it brought (review rv1): an agent's flood must not push it out.
    save(store, await pendingRequest('approved-an-hour-ago', NOW - 3_900_000), 'approved');
    save(store, await pendingRequest('approved-two-days-ago', NOW - 2 * DAY_MS), 'approved');
    for (let index = 0; index < 250; index++)
      save(
        store,
        await pendingRequest(`flood-${String(index).padStart(3, '0')}`, NOW - 1000 + index),
        'denied',
      );
    pruneState(store, { ...RETENTION, maxRequests: 100 }, NOW);
    const kept = settledIds();
    expect(kept).toHaveLength(201);
    expect(kept[0]).toBe('approved-an-hour-ago');
  });

  it('takes the deadline of a request an earlier version saved from its details, at the next open', async () => {
    save(store, await pendingRequest('from-before', NOW - 600_000), 'denied');
    store.db.prepare('UPDATE requests SET expires_at = NULL').run();
    store.close();
    store = new StateStore(join(dir, 'state.db'));
    expect(store.db.prepare('SELECT expires_at FROM requests').all()).toEqual([
      { expires_at: NOW - 300_000 },
    ]);
  });

  it('applies max_requests as requests are saved, after each hundredth of it', async () => {
    const settleMany = async (prefix: string, count: number, from: number) => {
      for (let index = 0; index < count; index++) {
        save(store, await pendingRequest(`${prefix}-${String(index)}`, from + index), 'denied');
        store.capSettledRequestsWhenDue(1000, NOW);
      }
    };
    await settleMany('first', 1009, NOW - 2 * DAY_MS);
    // 1009 saves: pruned at the 1000th (none beyond the cap yet), not since.
    expect(settledIds()).toHaveLength(1009);
    await settleMany('next', 1, NOW - 2 * DAY_MS + 100_000);
    const left = settledIds();
    expect(left).toHaveLength(1000);
    expect(left.at(0)).toBe('first-10');
    expect(left.at(-1)).toBe('next-0');
  });

  it('prunes when the daemon starts', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: 'http://127.0.0.1:9' });
    const longAgo = await pendingRequest('long-ago-denied', Date.now() - RETENTION_MS - DAY_MS);
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

describe('[retention] in a running daemon', () => {
  const rmCall = () =>
    hookInput('PreToolUse', 'Bash', { command: 'rm -rf build', description: 'Clean the build' });
  /** Makes a request look `ageMs` old, as if the clock had run on. */
  const age = (machine: LatchMachine, requestId: string, ageMs: number) =>
    withStore(machine, (machineStore) =>
      machineStore.db
        .prepare('UPDATE requests SET created_at = ? WHERE request_id = ?')
        .run(Date.now() - ageMs, requestId),
    );

  /** The agent's `rm -rf build`, approved on the paired phone (with a rule, given `grant`). */
  const approveOne = async (paired: PairedDaemon, grant?: Grant) => {
    const hook = startHook(paired.machine, rmCall());
    const request = await paired.relay.nextRequest();
    const { token } = await phoneApproves(
      paired.phones[0]!,
      request,
      paired.relay.origin,
      grant ? { grant } : {},
    );
    paired.relay.sendApproval(request.requestId, token);
    expect((await hook).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    return { request, token };
  };

  it('prunes again every tenth of the retention, and a token for a pruned request is refused as unknown_request', async () => {
    const paired = await startPairedDaemon({
      config: (text) => text.replace('requests_days = 30', 'requests_days = 0.001'),
    });
    const { relay, machine } = paired;
    let daemon = paired.daemon;
    try {
      const { request, token } = await approveOne(paired);

      // Older than 86.4 s: the next prune, at most 8.64 s away, forgets it.
      age(machine, request.requestId, 3_600_000);
      await expect
        .poll(() => withStore(machine, (machineStore) => machineStore.request(request.requestId)), {
          timeout: 30_000,
        })
        .toBeUndefined();

      daemon = await restartDaemon(daemon, machine, relay);
      relay.sendApproval(request.requestId, token);
      await expect
        .poll(() =>
          auditLines(machine).filter(
            (line) => line['event'] === 'token_refused' && line['requestId'] === request.requestId,
          ),
        )
        .toEqual([expect.objectContaining({ code: 'unknown_request' })]);
    } finally {
      await daemon.stop();
      await relay.stop();
    }
  }, 120_000);

  it('prunes by max_requests as calls are saved, and a token for a request pruned so is refused as unknown_request', async () => {
    const paired = await startPairedDaemon({
      config: (text) => text.replace('max_requests = 10000', 'max_requests = 100'),
    });
    const { relay, machine } = paired;
    const daemon = paired.daemon;
    try {
      const { request, token } = await approveOne(paired);

      // More than a day past its deadline (no report can name it), and a hundred settled
      // requests with later deadlines saved after it.
      withStore(machine, (machineStore) => {
        machineStore.db
          .prepare('UPDATE requests SET expires_at = ? WHERE request_id = ?')
          .run(Date.now() - 2 * DAY_MS, request.requestId);
      });
      const later = await Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          pendingRequest(`later-${String(index)}`, Date.now() - 900_000),
        ),
      );
      withStore(machine, (machineStore) => later.forEach((record) => save(machineStore, record, 'denied')));
      expect(withStore(machine, (machineStore) => machineStore.request(request.requestId))?.state).toBe(
        'approved',
      );

      // The next call the daemon saves prunes it.
      const next = startHook(
        machine,
        hookInput('PreToolUse', 'Bash', { command: 'rm -rf dist', description: 'Clean the output' }),
      );
      const nextRequest = await relay.nextRequest();
      expect(withStore(machine, (machineStore) => machineStore.request(request.requestId))).toBeUndefined();
      expect(withStore(machine, (machineStore) => machineStore.request(nextRequest.requestId))?.state).toBe(
        'pending',
      );

      relay.sendApproval(request.requestId, token);
      await expect
        .poll(() =>
          auditLines(machine).filter(
            (line) => line['event'] === 'token_refused' && line['requestId'] === request.requestId,
          ),
        )
        .toEqual([expect.objectContaining({ code: 'unknown_request' })]);
      await relay.sendDenial(paired.phones[0], nextRequest);
      expect((await next).output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    } finally {
      await daemon.stop();
      await relay.stop();
    }
  }, 120_000);

  it('keeps an approval an hour past its deadline through a flood of calls, so its report still freezes and ends its rule', async () => {
    const paired = await startPairedDaemon({
      config: (text) => text.replace('max_requests = 10000', 'max_requests = 100'),
    });
    const { relay, machine } = paired;
    const [phone] = paired.phones;
    try {
      const { request } = await approveOne(paired, 'half_hour');
      const rules = () =>
        withStore(machine, (machineStore) => new GrantStore(machineStore.db).live(Date.now()));
      expect(rules()).toHaveLength(1);

      // Its deadline an hour gone; since then, 250 calls settled (an agent's flood, review rv1).
      const flood = await Promise.all(
        Array.from({ length: 250 }, (_, index) => pendingRequest(`flood-${String(index)}`, Date.now())),
      );
      withStore(machine, (machineStore) => {
        machineStore.db
          .prepare('UPDATE requests SET expires_at = ? WHERE request_id = ?')
          .run(Date.now() - 3_600_000, request.requestId);
        flood.forEach((record) => save(machineStore, record, 'withdrawn'));
      });
      // The next call saved applies the cap (every save, at 100).
      const before = relay.requests.length;
      const next = startHook(
        machine,
        hookInput('PreToolUse', 'Bash', { command: 'rm -rf dist', description: 'Clean the output' }),
      );
      const nextRequest = await relay.nextRequest(before);
      expect(withStore(machine, (machineStore) => machineStore.request(request.requestId))?.state).toBe(
        'approved',
      );
      await relay.sendDenial(phone!, nextRequest);
      await next;

      // The person reports the approved call: the fleet freezes and its rule ends.
      await relay.sendDenial(phone!, request, 'fleet');
      await expect.poll(() => relay.freezes.length).toBe(1);
      expect(rules()).toEqual([]);
      expect(
        auditLines(machine).filter(
          (line) => line['event'] === 'reported' && line['requestId'] === request.requestId,
        ),
      ).toEqual([expect.objectContaining({ acted: true })]);
    } finally {
      await paired.stop();
    }
  }, 120_000);

  it('says a report of a request it no longer keeps did not act', async () => {
    const paired = await startPairedDaemon();
    const { relay, machine } = paired;
    try {
      const gone = { fleet: 'fleet-1', host: 'host-1', requestId: 'pruned-long-ago' };
      await relay.sendDenial(paired.phones[0]!, gone, 'fleet');
      await expect
        .poll(() => auditLines(machine).filter((line) => line['event'] === 'reported'))
        .toEqual([expect.objectContaining({ requestId: 'pruned-long-ago', acted: false })]);
      expect(relay.freezes).toEqual([]);
    } finally {
      await paired.stop();
    }
  }, 120_000);
});
