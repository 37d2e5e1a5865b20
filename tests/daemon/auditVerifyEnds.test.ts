import { mkdtempSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { AuditLog, GENESIS } from '../../daemon/audit/auditLog.ts';
import { auditAnchor, verifyAuditLog } from '../../daemon/audit/verifyAuditLog.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';

// `latch audit verify` at the ends of the chain: where it starts, an emptied file, and where a
// cut is reported, in this process (mutation testing reaches it).

let directory: string;
let store: StateStore;
let path: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'latch-audit-ends-'));
  store = new StateStore(join(directory, 'state.db'));
  path = join(directory, 'audit.log');
  return () => store.close();
});

const at = new Date(Date.UTC(2026, 10, 30, 12, 0, 0));
const file = (name: string) => join(directory, name);
const verify = () => verifyAuditLog(path, auditAnchor(store));

/** 1024 bytes hold six lines: 16 lines make audit.log.6, audit.log.12 and audit.log. */
function append(count: number): void {
  const log = new AuditLog(path, store, {
    redactContent: false,
    rotation: () => ({ rotateBytes: 1024, keepFiles: 10 }),
  });
  for (let index = 0; index < count; index++) log.append({ event: 'decision', request: `r${index}` }, at);
}

describe('the ends of the audit chain', () => {
  it('anchors nothing while the database has recorded no whole line', () => {
    expect(auditAnchor(store)).toEqual({ firstSeq: 1, last: undefined });
    expect(verify()).toEqual({ ok: true, lines: 0, files: ['audit.log'], firstSeq: 1 });
    store.setMeta('audit_hash', GENESIS);
    expect(auditAnchor(store).last).toBeUndefined();
  });

  it('starts the chain at the genesis hash: a lone first line claiming a predecessor fails', () => {
    writeFileSync(path, `${JSON.stringify({ seq: 1, prev: 'f'.repeat(64) })}\n`);
    expect(verifyAuditLog(path, { firstSeq: 1, last: undefined })).toEqual({
      ok: false,
      file: 'audit.log',
      line: 1,
      problem: 'does not carry the hash of the line before it (edited, deleted or moved)',
    });
  });

  it('catches a rotated file emptied by hand, saying it holds no line', () => {
    append(16);
    truncateSync(file('audit.log.12'), 0);
    expect(verify()).toEqual({
      ok: false,
      file: 'audit.log.12',
      line: 0,
      problem: 'is named for line 12 but holds no line: it was renamed, or lines were moved between files',
    });
  });

  it('reports a cut tail at the last line left, in the file that holds it', () => {
    append(16);
    truncateSync(path, 0);
    expect(verify()).toEqual({
      ok: false,
      file: 'audit.log.12',
      line: 6,
      problem: 'the log ends at line 12, the daemon last wrote line 16 (lines were cut or replaced)',
    });
  });

  it('reports a log emptied whole at the live file’s line 0', () => {
    append(3);
    truncateSync(path, 0);
    expect(readdirSync(directory).filter((name) => name.startsWith('audit.log'))).toEqual(['audit.log']);
    expect(verify()).toEqual({
      ok: false,
      file: 'audit.log',
      line: 0,
      problem: 'the log ends at line 0, the daemon last wrote line 3 (lines were cut or replaced)',
    });
  });
});
