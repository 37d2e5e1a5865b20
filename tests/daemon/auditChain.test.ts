import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { AuditLog, GENESIS, lineHash } from '../../daemon/audit/auditLog.ts';
import { auditAnchor, verifyAuditLog } from '../../daemon/audit/verifyAuditLog.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';

// The audit chain in this process, with its real state database: audit.test.ts checks it through
// `latch audit verify` (dist/), which mutation testing (npm run mutate) cannot reach.

let store: StateStore;
let path: string;

beforeEach(() => {
  const directory = mkdtempSync(join(tmpdir(), 'latch-audit-chain-'));
  store = new StateStore(join(directory, 'state.db'));
  path = join(directory, 'audit.log');
  return () => store.close();
});

const at = new Date(Date.UTC(2026, 10, 30, 12, 0, 0));
const rawLines = () => readFileSync(path, 'utf8').split('\n').slice(0, -1);
const anchor = () => auditAnchor(store);
/** A log checked on its own, with no database to vouch for its end. */
const UNANCHORED = { firstSeq: 1, last: undefined };
const intact = (lines: number) => ({ ok: true, lines, files: ['audit.log'], firstSeq: 1 });

function logOf(count: number): AuditLog {
  const log = new AuditLog(path, store, { redactContent: false });
  for (let index = 1; index <= count; index++) log.append({ event: 'decision', request: `r${index}` }, at);
  return log;
}

describe('the audit log', () => {
  it('chains each line to the one before it by SHA-256, numbers it, and anchors the end in the database', () => {
    logOf(3);
    const lines = rawLines();
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      { seq: 1, at: at.toISOString(), event: 'decision', request: 'r1', prev: GENESIS },
      { seq: 2, at: at.toISOString(), event: 'decision', request: 'r2', prev: lineHash(lines[0]!) },
      { seq: 3, at: at.toISOString(), event: 'decision', request: 'r3', prev: lineHash(lines[1]!) },
    ]);
    expect(anchor()).toEqual({ firstSeq: 1, last: { seq: 3, hash: lineHash(lines[2]!) } });
    expect(verifyAuditLog(path, anchor())).toEqual(intact(3));
  });

  it('hashes a line with SHA-256, in hex', () => {
    expect(lineHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(GENESIS).toBe('0'.repeat(64));
  });

  it('drops the text when told so once, by a plain true', () => {
    new AuditLog(path, store, { redactContent: true }).append(
      { event: 'request', request: 'r1', title: 't' },
      at,
    );
    expect(JSON.parse(rawLines()[0]!)).not.toHaveProperty('title');
  });

  it('closes the file after each line', () => {
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    logOf(20);
    expect(open()).toBe(before);
  });

  it('is written with mode 0600', () => {
    logOf(1);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('drops the text an agent wrote, never the ids, when content is redacted, asked at each line', () => {
    let redact = false;
    const log = new AuditLog(path, store, { redactContent: () => redact });
    const entry = {
      event: 'request',
      request: 'r1',
      title: 't',
      detail: 'd',
      command: 'c',
      cwd: '/w',
      target: 'x',
      input: {},
      paths: ['/p'],
    };
    log.append(entry, at);
    redact = true;
    log.append(entry, at);
    const [clear, redacted] = rawLines().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(clear).toMatchObject(entry);
    expect(Object.keys(redacted!)).toEqual(['seq', 'at', 'event', 'request', 'prev']);
  });
});

describe('verifying the audit log', () => {
  it('passes an empty or missing log', () => {
    expect(verifyAuditLog(path, UNANCHORED)).toEqual(intact(0));
  });

  it('counts a last line that lost its newline', () => {
    logOf(3);
    writeFileSync(path, rawLines().join('\n'));
    expect(verifyAuditLog(path, anchor())).toEqual(intact(3));
  });

  it('fails against an anchor with another count, even with the right hash', () => {
    logOf(3);
    expect(verifyAuditLog(path, { firstSeq: 1, last: { ...anchor().last!, seq: 4 } })).toMatchObject({
      ok: false,
      line: 3,
    });
  });

  it('fails on a line that is not JSON', () => {
    logOf(2);
    writeFileSync(path, `${rawLines()[0]}\nnot json\n`);
    expect(verifyAuditLog(path, UNANCHORED)).toEqual({
      ok: false,
      file: 'audit.log',
      line: 2,
      problem: 'not JSON',
    });
  });

  it('fails on an empty line inside the log', () => {
    logOf(2);
    const [first, second] = rawLines();
    writeFileSync(path, `${first}\n\n${second}\n`);
    expect(verifyAuditLog(path, UNANCHORED)).toEqual({
      ok: false,
      file: 'audit.log',
      line: 2,
      problem: 'not JSON',
    });
  });

  it('fails on an edited line, at the line after it', () => {
    logOf(3);
    const lines = rawLines();
    lines[1] = lines[1]!.replace('r2', 'r9');
    writeFileSync(path, `${lines.join('\n')}\n`);
    expect(verifyAuditLog(path, UNANCHORED)).toEqual({
      ok: false,
      file: 'audit.log',
      line: 3,
      problem: 'does not carry the hash of the line before it (edited, deleted or moved)',
    });
  });

  it('fails on a first line that does not start the chain', () => {
    logOf(2);
    writeFileSync(path, `${rawLines()[1]}\n`);
    expect(verifyAuditLog(path, UNANCHORED)).toEqual({
      ok: false,
      file: 'audit.log',
      line: 1,
      problem:
        "starts at line 2 where line 1 belongs: an audit file was deleted, renamed or moved, and not by Latch's retention",
    });
  });

  it('fails on a line whose sequence number is not its place, even when its hash is right', () => {
    logOf(1);
    const forged = JSON.stringify({
      seq: 5,
      at: at.toISOString(),
      event: 'x',
      prev: lineHash(rawLines()[0]!),
    });
    writeFileSync(path, `${rawLines()[0]}\n${forged}\n`);
    expect(verifyAuditLog(path, UNANCHORED)).toEqual({
      ok: false,
      file: 'audit.log',
      line: 2,
      problem: 'sequence number 5 where 2 belongs',
    });
  });

  it.each([
    ['lines were cut from its end', 2, (lines: string[]) => lines.slice(0, 2)],
    [
      'its last line was replaced by another, validly chained',
      3,
      (lines: string[]) => [...lines.slice(0, 2), rewrite(lines)],
    ],
  ])('fails against the database’s anchor when %s', (_what, line, change) => {
    logOf(3);
    const held = anchor();
    writeFileSync(path, `${change(rawLines()).join('\n')}\n`);
    expect(verifyAuditLog(path, UNANCHORED)).toEqual(intact(line));
    expect(verifyAuditLog(path, held)).toEqual({
      ok: false,
      file: 'audit.log',
      line,
      problem: `the log ends at line ${line}, the daemon last wrote line 3 (lines were cut or replaced)`,
    });
  });

  it('says lines were added or the database lost writes when the log goes on, whole, past the line it vouches for', () => {
    const log = logOf(3);
    const held = anchor();
    log.append({ event: 'decision', request: 'r4' }, at);
    log.append({ event: 'decision', request: 'r5' }, at);
    expect(verifyAuditLog(path, held)).toEqual({
      ok: false,
      file: 'audit.log',
      line: 5,
      problem:
        'the log goes on to line 5, the state database records line 3 as the last: lines were added to the log, or the state database lost its latest writes (its -wal file removed while the daemon ran, or an older copy put back)',
    });
    // Not when the line it vouches for was replaced, and the lines after it chained anew: the
    // chain holds, and only the anchor tells.
    const lines = rawLines().map((line) => JSON.parse(line) as Record<string, unknown>);
    lines[2] = { ...lines[2], request: 'other' };
    const rechained: string[] = [];
    for (const [index, line] of lines.entries()) {
      const text = JSON.stringify({ ...line, prev: index === 0 ? GENESIS : lineHash(rechained[index - 1]!) });
      rechained.push(text);
    }
    writeFileSync(path, `${rechained.join('\n')}\n`);
    expect(verifyAuditLog(path, UNANCHORED)).toEqual(intact(5));
    expect(verifyAuditLog(path, held)).toEqual({
      ok: false,
      file: 'audit.log',
      line: 5,
      problem: 'the log ends at line 5, the daemon last wrote line 3 (lines were cut or replaced)',
    });
  });
});

/** The third line, its content changed and its chain kept intact: only the anchor tells. */
function rewrite(lines: string[]): string {
  return JSON.stringify({ seq: 3, at: at.toISOString(), event: 'forged', prev: lineHash(lines[1]!) });
}
