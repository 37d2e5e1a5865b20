import { describe, expect, it } from 'vitest';
import { plainCommandWords } from '../../daemon/policy/plainCommandWords.ts';
import { ansiCEnd, closingBrace, decodeAnsiC } from '../../daemon/policy/shellSpans.ts';

// The spans the policy reads through without lexing their insides, and the plain commands a grant
// compares, in this process: a span read one character short or long would hide a word from a rule.
describe('the end of a ${…} span', () => {
  it.each([
    ['HOME}/.latch', 4],
    ['a:-{b}}c', 6],
    ['a:-{{b}}}', 8],
    ['a\\}b}', 4],
    ['a\\{b}', 4],
    ['unclosed', 8],
    ['{unclosed}', 10],
  ])('of %j is at %i', (text, end) => {
    expect(closingBrace(text, 0)).toBe(end);
  });

  it('starts where it is told', () => {
    expect(closingBrace('x}${HOME}', 4)).toBe(8);
  });
});

describe("the end of a $'…' span", () => {
  it.each([
    ["\\x2elatch'/totp.json", 9],
    ["a\\'b'c", 4],
    ["a\\\\'b'", 3],
    ['unclosed', 8],
    ['ends in a backslash\\', 20],
  ])('of %j is at %i', (text, end) => {
    expect(ansiCEnd(text, 0)).toBe(end);
  });

  it('starts where it is told', () => {
    expect(ansiCEnd("'x'y'", 1)).toBe(2);
  });
});

describe("what $'…' decodes to, as bash does", () => {
  it.each([
    ['\\x2elatch', '.latch'],
    ['\\x2Elatch', '.latch'],
    ['\\056latch', '.latch'],
    ['\\0560', '.0'],
    ['\\x2ez', '.z'],
    ['\\x2e2', '.2'],
    ['\\u002elatch', '.latch'],
    ['\\u00e9t\\u00e9', 'été'],
    ['\\U0001F512', '\u{1F512}'],
    ['\\U0000002e\\U2e', '..'],
    ['\\cA\\ca', '\x01\x01'],
    ['\\c\n', '\n'],
    ['\\a\\b\\e\\E\\f\\n\\r\\t\\v', '\x07\b\x1b\x1b\f\n\r\t\v'],
    ['\\\\\\\'\\"\\?', '\\\'"?'],
    // Unknown escapes and code points past Unicode stay as written.
    ['\\q\\z', '\\q\\z'],
    ['\\U0010FFFF', '\u{10FFFF}'],
    ['\\U00110000', '\\U00110000'],
    // As bash: a NUL ends the string, an octal escape is one byte (`\543` is `c`), escapes
    // are bytes read as UTF-8 (`\xc3\xa9` is `é`), `\c?` is DEL and `\c\\` one escape.
    ['ab\\0cd', 'ab'],
    ['a\\c@b', 'a'],
    ['.lat\\543h', '.latch'],
    ['\\xc3\\xa9t\\303\\251', 'été'],
    ['\\c?', '\x7f'],
    ['\\c\\\\x', '\x1cx'],
    ['no escapes', 'no escapes'],
  ])('%j is %j', (text, decoded) => {
    expect(decodeAnsiC(text)).toBe(decoded);
  });

  it("decodes a $'…' of any length: a long literal run is no RangeError (review rv10a)", () => {
    const long = 'x'.repeat(300_000);
    expect(decodeAnsiC(`${long}\\x2e`)).toBe(`${long}.`);
  });
});

describe('a plain command, which a grant may compare word for word', () => {
  it.each([
    ['git push origin main', ['git', 'push', 'origin', 'main']],
    ['npm run build:prod -- --mode=ci', ['npm', 'run', 'build:prod', '--', '--mode=ci']],
    ['scp a@b.c:/x/y,z ./out%1+2', ['scp', 'a@b.c:/x/y,z', './out%1+2']],
    ['ls', ['ls']],
  ])('%j is %j', (command, words) => {
    expect(plainCommandWords(command)).toEqual(words);
  });

  it.each([
    ['git push; rm -rf /', 'a second command'],
    ['git push && rm -rf /', 'a second command'],
    ['git push | sh', 'a pipe'],
    ["git push '--force'", 'a quote'],
    ['git push "--force"', 'a quote'],
    ['git push \\--force', 'an escape'],
    ['git push $REMOTE', 'a variable'],
    ['git push $(cat remote)', 'a command substitution'],
    ['rm *.log', 'a glob'],
    ['rm log*', 'a glob at the end'],
    ['cd ~', 'a tilde'],
    ['echo x > out', 'a redirection'],
    ['git  push', 'two spaces'],
    ['git push ', 'a trailing space'],
    [' git push', 'a leading space'],
    ['git\tpush', 'a tab'],
    ['', 'no words'],
    ['(git push)', 'a subshell'],
  ])('%j is not: %s', (command) => {
    expect(plainCommandWords(command)).toBeUndefined();
  });
});
