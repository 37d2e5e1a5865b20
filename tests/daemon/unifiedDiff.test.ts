import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../daemon/diff/unifiedDiff.ts';

const labels = { from: 'a/app.ts', to: 'b/app.ts' };
const numbered = (count: number, from = 1) => Array.from({ length: count }, (_, i) => `line ${from + i}\n`);

/** Applies a diff with the system's own `patch`, so the diff is judged by a tool that is not ours. */
function patched(before: string, diff: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'latch-diff-'));
  writeFileSync(join(dir, 'file'), before);
  writeFileSync(join(dir, 'change.diff'), diff);
  execFileSync('patch', ['--quiet', '--force', join(dir, 'file'), join(dir, 'change.diff')]);
  return readFileSync(join(dir, 'file'), 'utf8');
}

describe('unifiedDiff', () => {
  it('shows one changed line with three lines of context and real line numbers', () => {
    const before = numbered(20).join('');
    const after = before.replace('line 10\n', 'line ten\n');
    expect(unifiedDiff(before, after, labels)).toBe(
      [
        '--- a/app.ts',
        '+++ b/app.ts',
        '@@ -7,7 +7,7 @@',
        ' line 7',
        ' line 8',
        ' line 9',
        '-line 10',
        '+line ten',
        ' line 11',
        ' line 12',
        ' line 13',
        '',
      ].join('\n'),
    );
  });

  it('splits changes far apart into two hunks and merges near ones into one', () => {
    const before = numbered(40).join('');
    const far = before.replace('line 5\n', 'five\n').replace('line 30\n', 'thirty\n');
    expect(unifiedDiff(before, far, labels).match(/^@@ .* @@$/gm)).toEqual([
      '@@ -2,7 +2,7 @@',
      '@@ -27,7 +27,7 @@',
    ]);
    const near = before.replace('line 5\n', 'five\n').replace('line 11\n', 'eleven\n');
    expect(unifiedDiff(before, near, labels).match(/^@@ .* @@$/gm)).toEqual(['@@ -2,13 +2,13 @@']);
  });

  it('shows a new file as all added, from /dev/null', () => {
    expect(unifiedDiff('', 'one\ntwo\n', { from: '/dev/null', to: 'b/new.txt' })).toBe(
      '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n',
    );
  });

  it('is empty when nothing changes', () => {
    expect(unifiedDiff('same\n', 'same\n', labels)).toBe('');
  });

  it('gives a diff that patch(1) applies to turn the old text into the new', () => {
    const line = fc.constantFrom('a', 'b', 'c', 'd', '', '  x');
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.array(line, { maxLength: 30 }), (a, b) => {
        const before = a.map((text) => `${text}\n`).join('');
        const after = b.map((text) => `${text}\n`).join('');
        const diff = unifiedDiff(before, after, labels);
        expect(diff === '' ? before : patched(before, diff)).toBe(after);
      }),
      { numRuns: 60 },
    );
  });

  it('finds the fewest changed lines, as diff(1) does', () => {
    const before = numbered(200).join('');
    const after = numbered(200)
      .filter((_, i) => i % 50 !== 7)
      .join('')
      .replace('line 100\n', 'line 100\ninserted\n');
    const ours = unifiedDiff(before, after, labels);
    const theirs = execFileSync(
      'bash',
      ['-c', 'diff -u <(printf %s "$1") <(printf %s "$2") || true', '_', before, after],
      {
        encoding: 'utf8',
      },
    );
    const changes = (diff: string) =>
      diff.split('\n').filter((text) => /^[-+](?![-+]{2} )/.test(text)).length;
    expect(changes(ours)).toBe(changes(theirs));
    expect(patched(before, ours)).toBe(after);
  });

  it('answers a rewrite of a huge file at once, as a whole replacement that says so', () => {
    const before = numbered(60_000).join('');
    const after = numbered(60_000, 1_000_000).join('');
    const diff = unifiedDiff(before, after, labels);
    expect(diff.split('\n')[0]).toBe('# too different to compare line by line: shown as a whole replacement');
    expect(patched(before, diff)).toBe(after);
  });
});
