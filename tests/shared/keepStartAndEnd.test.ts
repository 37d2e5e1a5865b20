import { describe, expect, it } from 'vitest';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { keepLineStartAndEnd, keepStartAndEnd } from '../../shared/text/keepStartAndEnd.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';

const lines = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, i) => `${prefix} ${i}`).join('\n');

describe('keepStartAndEnd', () => {
  it('leaves a text that fits as it is', () => {
    expect(keepStartAndEnd('rm -rf build\necho done', 100)).toEqual({
      text: 'rm -rf build\necho done',
      changed: false,
    });
  });

  it('cleans like sanitizeText, and says so', () => {
    expect(keepStartAndEnd('rm\u202e -rf\u200b build', 100)).toEqual({ text: 'rm -rf build', changed: true });
  });

  it('keeps the start and the end of a long command, whole lines, with the bytes not shown between', () => {
    const command = `${lines(300, 'start')}\n${lines(300, 'end')}| sh`;
    const { text, changed } = keepStartAndEnd(command, 1000);
    expect(changed).toBe(true);
    expect(utf8Length(text)).toBeLessThanOrEqual(1000);
    expect(text.startsWith('start 0\nstart 1\n')).toBe(true);
    expect(text.endsWith('end 299| sh')).toBe(true);
    const [head, hidden, tail] = text.split(/\n… ([\d,]+) bytes not shown …\n/);
    expect(head!.split('\n').every((line) => /^start \d+$/.test(line))).toBe(true);
    expect(tail!.split('\n').every((line) => /^end \d+(\| sh)?$/.test(line))).toBe(true);
    expect(Number(hidden!.replaceAll(',', ''))).toBe(
      utf8Length(command) - utf8Length(head!) - utf8Length(tail!),
    );
  });

  it('cuts a single long line at whole characters, never inside one', () => {
    const { text } = keepStartAndEnd('é😀'.repeat(5000), 500);
    expect(utf8Length(text)).toBeLessThanOrEqual(500);
    expect(text).not.toContain('\uFFFD');
    expect(text).toMatch(/^(é😀|😀)+é?\n… 2\d,\d{3} bytes not shown …\n(😀|é😀)+$/u);
  });

  it('gives text the wire accepts as clean, and is idempotent', () => {
    const { text } = keepStartAndEnd(`${'x'.repeat(9000)}\u0007${'y'.repeat(9000)}`, LIMITS.detailBytes);
    expect(sanitizeText(text, { maxBytes: LIMITS.detailBytes, multiline: true }).changed).toBe(false);
    expect(keepStartAndEnd(text, LIMITS.detailBytes)).toEqual({ text, changed: false });
  });
});

describe('keepLineStartAndEnd', () => {
  it('leaves a line that fits as it is, cleaned as a line', () => {
    expect(keepLineStartAndEnd('rm -rf build', 100)).toEqual({ text: 'rm -rf build', changed: false });
    expect(keepLineStartAndEnd('rm\n-rf', 100)).toEqual({ text: 'rm -rf', changed: true });
  });

  it('keeps the start and the end of a long line, whole characters, within the bytes', () => {
    const folder = `/home/dev/${'very-long-directory-name/'.repeat(40)}real-target`;
    const { text, changed } = keepLineStartAndEnd(folder, LIMITS.cwdBytes);
    expect(changed).toBe(true);
    expect(utf8Length(text)).toBeLessThanOrEqual(LIMITS.cwdBytes);
    expect(text).toMatch(/^\/home\/dev\/very-long-directory-name\/.* … .*\/real-target$/);
    const wide = keepLineStartAndEnd('é😀'.repeat(500), 200).text;
    expect(utf8Length(wide)).toBeLessThanOrEqual(200);
    expect(wide).not.toContain('\uFFFD');
    expect(sanitizeText(wide, { maxBytes: 200, multiline: false }).changed).toBe(false);
  });

  it('stays within a cap too small for the gap, as sanitizeText cuts', () => {
    for (const maxBytes of [3, 4, 5]) {
      const { text } = keepLineStartAndEnd('x'.repeat(30), maxBytes);
      expect(utf8Length(text)).toBeLessThanOrEqual(maxBytes);
      expect(sanitizeText(text, { maxBytes, multiline: false }).changed).toBe(false);
    }
  });
});
