import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { AuditLog, lineHash } from '../../daemon/audit/auditLog.ts';
import type { AuditRotation } from '../../daemon/audit/auditRotation.ts';
import { auditAnchor, verifyAuditLog } from '../../daemon/audit/verifyAuditLog.ts';
import { stateMatchesAudit } from '../../daemon/state/stateMatchesAudit.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';

// Rotation in this process, with the real state database; audit.test.ts checks the same through
// `latch audit verify` and config.toml.

let directory: string;
let store: StateStore;
let path: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'latch-audit-rotation-'));
  store = new StateStore(join(directory, 'state.db'));
  path = join(directory, 'audit.log');
  return () => store.close();
});

const at = new Date(Date.UTC(2026, 10, 30, 12, 0, 0));
/** Lines 1 to 9 are 150 bytes, 10 to 99 152: 1024 bytes hold six of them. */
const SMALL: AuditRotation = { rotateBytes: 1024, keepFiles: 10 };
const file = (name: string) => join(directory, name);
const linesOf = (name: string) => readFileSync(file(name), 'utf8').split('\n').slice(0, -1);
const seqs = (name: string) => linesOf(name).map((line) => (JSON.parse(line) as { seq: number }).seq);
const auditFiles = () =>
  readdirSync(directory)
    .filter((name) => name.startsWith('audit.log'))
    .sort();
const verify = () => verifyAuditLog(path, auditAnchor(store));
const MISSING =
  "where line 7 belongs: an audit file was deleted, renamed or moved, and not by Latch's retention";

function append(count: number, rotation: AuditRotation = SMALL, on: StateStore = store): void {
  const log = new AuditLog(path, on, { redactContent: false, rotation: () => rotation });
  for (let index = 0; index < count; index++) log.append({ event: 'decision', request: `r${index}` }, at);
}

describe('rotating the audit log', () => {
  it('starts a new file before a line would take it past rotate_bytes, naming the old one for its last line', () => {
    append(16);
    expect(auditFiles()).toEqual(['audit.log', 'audit.log.12', 'audit.log.6']);
    expect(seqs('audit.log.6')).toEqual([1, 2, 3, 4, 5, 6]);
    expect(seqs('audit.log.12')).toEqual([7, 8, 9, 10, 11, 12]);
    expect(seqs('audit.log')).toEqual([13, 14, 15, 16]);
    for (const name of auditFiles()) {
      expect(statSync(file(name)).size).toBeLessThanOrEqual(SMALL.rotateBytes);
      expect(statSync(file(name)).mode & 0o777).toBe(0o600);
    }
  });

  it('continues the chain: a new file’s first line carries the hash of the last line before it', () => {
    append(16);
    const first = JSON.parse(linesOf('audit.log')[0]!) as { seq: number; prev: string };
    expect(first).toMatchObject({ seq: 13, prev: lineHash(linesOf('audit.log.12').at(-1)!) });
    expect(JSON.parse(linesOf('audit.log.12')[0]!)).toMatchObject({
      seq: 7,
      prev: lineHash(linesOf('audit.log.6').at(-1)!),
    });
  });

  it('verifies the whole chain across three files', () => {
    append(16);
    expect(verify()).toEqual({
      ok: true,
      lines: 16,
      files: ['audit.log.6', 'audit.log.12', 'audit.log'],
      firstSeq: 1,
    });
    expect(stateMatchesAudit(store, path)).toEqual({ ok: true, repaired: false });
  });

  it('catches a line edited in the middle file, naming that file and the line after the edit', () => {
    append(16);
    const middle = linesOf('audit.log.12');
    middle[2] = middle[2]!.replace('"r8"', '"r0"');
    writeFileSync(file('audit.log.12'), `${middle.join('\n')}\n`);
    expect(verify()).toEqual({
      ok: false,
      file: 'audit.log.12',
      line: 4,
      problem: 'does not carry the hash of the line before it (edited, deleted or moved)',
    });
  });

  it('catches a middle file deleted, at the first line of the file after it', () => {
    append(16);
    rmSync(file('audit.log.12'));
    expect(verify()).toEqual({
      ok: false,
      file: 'audit.log',
      line: 1,
      problem: `starts at line 13 ${MISSING}`,
    });
    expect(stateMatchesAudit(store, path)).toEqual({
      ok: false,
      problem: `audit.log starts at line 13 ${MISSING}`,
    });
  });

  it('catches two files swapped by name', () => {
    append(22);
    // audit.log.6 (1–6), .12 (7–12), .18 (13–18): the middle two trade names.
    renameSync(file('audit.log.12'), file('swap'));
    renameSync(file('audit.log.18'), file('audit.log.12'));
    renameSync(file('swap'), file('audit.log.18'));
    expect(verify()).toEqual({
      ok: false,
      file: 'audit.log.12',
      line: 1,
      problem: `starts at line 13 ${MISSING}`,
    });
  });

  it('catches a file renamed for another line', () => {
    append(16);
    renameSync(file('audit.log.12'), file('audit.log.13'));
    expect(verify()).toEqual({
      ok: false,
      file: 'audit.log.13',
      line: 6,
      problem: 'is named for line 13 but ends at line 12: it was renamed, or lines were moved between files',
    });
  });

  it('catches the oldest file deleted by hand', () => {
    append(16);
    rmSync(file('audit.log.6'));
    const problem =
      "starts at line 7 where line 1 belongs: an audit file was deleted, renamed or moved, and not by Latch's retention";
    expect(verify()).toEqual({ ok: false, file: 'audit.log.12', line: 1, problem });
    expect(stateMatchesAudit(store, path)).toEqual({ ok: false, problem: `audit.log.12 ${problem}` });
  });

  it('deletes the oldest files beyond keep_files itself, records the first line kept, and verifies', () => {
    append(28, { rotateBytes: 1024, keepFiles: 2 });
    // .6, .12 and .18 were rotated before .24: the two oldest went, in turn.
    expect(auditFiles()).toEqual(['audit.log', 'audit.log.18', 'audit.log.24']);
    expect(store.meta('audit_first_seq')).toBe('13');
    expect(verify()).toEqual({
      ok: true,
      lines: 16,
      files: ['audit.log.18', 'audit.log.24', 'audit.log'],
      firstSeq: 13,
    });
    expect(stateMatchesAudit(store, path)).toEqual({ ok: true, repaired: false });
  });

  it('still catches the oldest kept file deleted by hand after its own retention', () => {
    append(28, { rotateBytes: 1024, keepFiles: 2 });
    rmSync(file('audit.log.18'));
    expect(verify()).toMatchObject({
      ok: false,
      file: 'audit.log.24',
      line: 1,
      problem: expect.stringMatching(/^starts at line 19 where line 13 belongs/),
    });
  });

  it('keeps no rotated file with keep_files = 0, and a writer keeping more never claims lines back', () => {
    append(8, { rotateBytes: 1024, keepFiles: 0 });
    expect(auditFiles()).toEqual(['audit.log']);
    expect(store.meta('audit_first_seq')).toBe('7');
    append(12, { rotateBytes: 1024, keepFiles: 10 });
    expect(store.meta('audit_first_seq')).toBe('7');
    expect(verify()).toMatchObject({ ok: true, lines: 14, firstSeq: 7 });
  });

  it('is one chain when two writers (the daemon and the CLI) append in turn, each rotating', () => {
    const other = new StateStore(join(directory, 'state.db'));
    try {
      // Rotations at lines 7, 19 and 31 are the other's (keeping one file), 13 and 25 this one's.
      for (let round = 0; round < 8; round++) {
        append(2, SMALL, store);
        append(2, { rotateBytes: 1024, keepFiles: 1 }, other);
      }
    } finally {
      other.close();
    }
    expect(auditFiles()).toEqual(['audit.log', 'audit.log.30']);
    expect(verify()).toMatchObject({ ok: true, lines: 8, firstSeq: 25 });
  });

  it('starts on a crash between the rename and the first line of the new file', () => {
    append(12);
    // The rename of a thirteenth append's rotation, with no line written and nothing committed.
    renameSync(path, file('audit.log.12'));
    expect(stateMatchesAudit(store, path)).toEqual({ ok: true, repaired: false });
    append(1);
    expect(verify()).toMatchObject({
      ok: true,
      lines: 13,
      files: ['audit.log.6', 'audit.log.12', 'audit.log'],
    });
  });

  it('leaves an old file to the next rotation when a crash came before its deletion', () => {
    append(28, { rotateBytes: 1024, keepFiles: 2 });
    writeFileSync(file('audit.log.12'), `${'{"seq":12}\n'}`, { mode: 0o600 });
    expect(verify()).toMatchObject({ ok: true, files: ['audit.log.18', 'audit.log.24', 'audit.log'] });
    append(6, { rotateBytes: 1024, keepFiles: 2 });
    expect(auditFiles()).toEqual(['audit.log', 'audit.log.24', 'audit.log.30']);
  });
});
