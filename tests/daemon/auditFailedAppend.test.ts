import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditLog } from '../../daemon/audit/auditLog.ts';
import { auditAnchor, verifyAuditLog } from '../../daemon/audit/verifyAuditLog.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';

// An append that fails leaves the log and the database as they were, and the next one goes on.
// A full disk cannot be made here: the store's failure stands in for it (vi.spyOn, once).

let directory: string;
let store: StateStore;
let path: string;
let log: AuditLog;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'latch-audit-failed-'));
  store = new StateStore(join(directory, 'state.db'));
  path = join(directory, 'audit.log');
  log = new AuditLog(path, store, { redactContent: false });
  return () => store.close();
});

const at = new Date(Date.UTC(2026, 10, 30, 12, 0, 0));
const append = (request: string) => log.append({ event: 'decision', request }, at);
const verify = () => verifyAuditLog(path, auditAnchor(store));
const fullDisk = () => {
  throw new Error('ENOSPC: no space left on device');
};

describe('a failed append', () => {
  it('cuts its written line back when the database cannot record it', () => {
    append('r1');
    append('r2');
    const before = readFileSync(path, 'utf8');
    vi.spyOn(store, 'setMeta').mockImplementationOnce(fullDisk);
    expect(() => append('r3')).toThrow('ENOSPC: no space left on device');
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(verify()).toMatchObject({ ok: true, lines: 2 });
    append('r3');
    expect(verify()).toMatchObject({ ok: true, lines: 3 });
  });

  it('leaves the file untouched when it fails before its line is written', () => {
    append('r1');
    const before = readFileSync(path, 'utf8');
    vi.spyOn(store, 'meta').mockImplementationOnce(fullDisk);
    expect(() => append('r2')).toThrow('ENOSPC: no space left on device');
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(verify()).toMatchObject({ ok: true, lines: 1 });
  });

  it('reports the write’s own error when the file could not be opened, and the next append goes on', () => {
    mkdirSync(path);
    expect(() => append('r1')).toThrow(/^EISDIR: illegal operation on a directory, open /);
    rmSync(path, { recursive: true });
    append('r1');
    expect(verify()).toMatchObject({ ok: true, lines: 1 });
  });
});
