import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../daemon/audit/auditLog.ts';
import { deny } from '../../daemon/gate/deny.ts';
import { PushFatigue } from '../../daemon/gate/pushFatigue.ts';
import { Waiting } from '../../daemon/gate/waiting.ts';
import type { GateAnswer } from '../../daemon/socket/localApi.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';

let directory: string;
let store: StateStore;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'latch-waiting-'));
  store = new StateStore(join(directory, 'state.db'));
});
afterEach(() => {
  store.close();
  rmSync(directory, { recursive: true, force: true });
});

/** A Waiting whose audit lines go to `auditPath`. */
function waitingWith(auditPath: string): Waiting {
  const audit = new AuditLog(auditPath, store, { redactContent: false });
  return new Waiting({ store, audit, fatigue: new PushFatigue(store), onAllGone: () => {} });
}

/** An audit log that cannot be written, as on a full disk: its directory is a file. */
function unwritableAudit(): string {
  writeFileSync(join(directory, 'not-a-directory'), '');
  return join(directory, 'not-a-directory', 'audit.log');
}

const allow: GateAnswer = {
  decision: 'allow',
  reason: 'approved on Test phone',
  via: 'phone',
  requestId: 'r1',
};

describe('waiting callers hear an answer only once it is recorded', () => {
  it('gives an allow after its record, the decided line written', async () => {
    const auditPath = join(directory, 'audit.log');
    const waiting = waitingWith(auditPath);
    const answer = waiting.wait('r1', Date.now() + 60_000);
    waiting.settle('r1', allow);
    await expect(answer).resolves.toEqual(allow);
    expect(waiting.pending).toBe(0);
    expect(readFileSync(auditPath, 'utf8')).toMatch(/"event":"decided","requestId":"r1","decision":"allow"/);
  });

  it('withholds an allow it cannot record, and the caller hears its deadline’s deny', async () => {
    const waiting = waitingWith(unwritableAudit());
    const answer = waiting.wait('r1', Date.now() + 200);
    expect(() => waiting.settle('r1', allow)).toThrow(/ENOTDIR/);
    expect(waiting.pending).toBe(1);
    await expect(answer).resolves.toMatchObject({ decision: 'deny', blockReason: 'expired' });
    expect(waiting.pending).toBe(0);
  });

  it('gives a deny it cannot record all the same', async () => {
    const waiting = waitingWith(unwritableAudit());
    const answer = waiting.wait('r1', Date.now() + 60_000);
    const denied = deny('denied', 'denied on Test phone', 'r1');
    expect(() => waiting.settle('r1', denied)).toThrow(/ENOTDIR/);
    await expect(answer).resolves.toEqual(denied);
    expect(waiting.pending).toBe(0);
  });
});
