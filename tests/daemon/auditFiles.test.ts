import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { edgeLines, keptAuditFiles, readAuditLines, rotatedFiles } from '../../daemon/audit/auditFiles.ts';
import { AuditLog } from '../../daemon/audit/auditLog.ts';
import type { AuditRotation } from '../../daemon/audit/auditRotation.ts';
import { auditAnchor, verifyAuditLog } from '../../daemon/audit/verifyAuditLog.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';

// Which files make the audit chain, how they are read, and where rotation and retention draw
// their lines, in this process (mutation testing reaches it); auditRotation.test.ts has the rest.

let directory: string;
let store: StateStore;
let path: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'latch-audit-files-'));
  store = new StateStore(join(directory, 'state.db'));
  path = join(directory, 'audit.log');
  return () => store.close();
});

const at = new Date(Date.UTC(2026, 10, 30, 12, 0, 0));
const file = (name: string) => join(directory, name);
const auditFiles = () =>
  readdirSync(directory)
    .filter((name) => name.startsWith('audit.log'))
    .sort();
const verify = () => verifyAuditLog(path, auditAnchor(store));
const openFiles = () => readdirSync('/proc/self/fd').length;

/** Lines 1 to 9 are 150 bytes each. */
function append(count: number, rotation: AuditRotation): void {
  const log = new AuditLog(path, store, { redactContent: false, rotation: () => rotation });
  for (let index = 0; index < count; index++) log.append({ event: 'decision', request: `r${index}` }, at);
}

describe('the files of the audit chain', () => {
  it('counts only audit.log.<number> as rotated, never a name that merely contains one', () => {
    for (const name of ['audit.log.6', 'audit.log.12', 'audit.log.6.bak', 'audit.log.old.7', 'audit.log.07'])
      writeFileSync(file(name), '');
    expect(rotatedFiles(path).map(({ name, lastSeq }) => [name, lastSeq])).toEqual([
      ['audit.log.6', 6],
      ['audit.log.12', 12],
    ]);
  });

  it('keeps a rotated file whose last line is the first kept line', () => {
    for (const name of ['audit.log.5', 'audit.log.6']) writeFileSync(file(name), '');
    expect(keptAuditFiles(path, 6).map(({ name }) => name)).toEqual(['audit.log.6', 'audit.log']);
  });

  it('reads a missing file as no lines, and fails on one it cannot read', () => {
    expect(readAuditLines(file('absent'))).toEqual([]);
    expect(() => readAuditLines(directory)).toThrow(expect.objectContaining({ code: 'EISDIR' }));
  });

  it('reads the first and the last line of a file larger than the part it reads, and closes it', () => {
    const lines = Array.from(
      { length: 400 },
      (_, index) => `{"seq":${index + 1},"pad":"${'x'.repeat(1000)}"}`,
    );
    writeFileSync(path, `${lines.join('\n')}\n`);
    expect(statSync(path).size).toBeGreaterThan(256 * 1024);
    const before = openFiles();
    expect(edgeLines(path, 'start')[0]).toBe(lines[0]);
    expect(edgeLines(path, 'end').at(-1)).toBe(lines.at(-1));
    expect(openFiles()).toBe(before);
    expect(edgeLines(file('absent'), 'end')).toEqual([]);
  });
});

describe('rotation and retention at their edges', () => {
  it('lets a line fill the file to exactly rotate_bytes, and rotates at the next', () => {
    append(3, { rotateBytes: 300, keepFiles: 10 });
    expect(auditFiles()).toEqual(['audit.log', 'audit.log.2']);
    expect(readAuditLines(file('audit.log.2'))).toHaveLength(2);
  });

  it('gives a line larger than rotate_bytes a file of its own, the first one included', () => {
    append(3, { rotateBytes: 100, keepFiles: 10 });
    expect(auditFiles()).toEqual(['audit.log', 'audit.log.1', 'audit.log.2']);
    expect(verify()).toMatchObject({ ok: true, lines: 3 });
  });

  it('keeps exactly keep_files rotated files, the oldest kept holding the first kept line', () => {
    append(5, { rotateBytes: 100, keepFiles: 2 });
    expect(auditFiles()).toEqual(['audit.log', 'audit.log.3', 'audit.log.4']);
    expect(store.meta('audit_first_seq')).toBe('3');
    expect(verify()).toEqual({
      ok: true,
      lines: 3,
      files: ['audit.log.3', 'audit.log.4', 'audit.log'],
      firstSeq: 3,
    });
  });
});
