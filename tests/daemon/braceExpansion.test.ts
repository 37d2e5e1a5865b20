import { describe, expect, it } from 'vitest';
import { expandBraces } from '../../daemon/policy/braceExpansion.ts';
import { wordText, type Word } from '../../daemon/policy/commandWords.ts';

const bare = (text: string): Word => [{ text, glob: true }];
const texts = (word: Word) => expandBraces(word).map(wordText);

describe('brace expansion, as the shell does it before anything else', () => {
  it.each<[string, string[]]>([
    ['{totp,host-token}.json', ['totp.json', 'host-token.json']],
    ['~/.la{tch/host-ke?.json,x}', ['~/.latch/host-ke?.json', '~/.lax']],
    ['.lat{c..c}h/host-ke{y..y}.json', ['.latch/host-key.json']],
    ['{a..e}', ['a', 'b', 'c', 'd', 'e']],
    ['{e..a..2}', ['e', 'c', 'a']],
    ['x{1..3}', ['x1', 'x2', 'x3']],
    ['{08..10}', ['08', '09', '10']],
    ['{3..-1..2}', ['3', '1', '-1']],
    ['{a,{b,c}}', ['a', 'b', 'c']],
    ['{{a,b},c}', ['a', 'b', 'c']],
    ['{a,b}{c,d}', ['ac', 'ad', 'bc', 'bd']],
    ['{,.}latch', ['latch', '.latch']],
    ['}{a,b}', ['}a', '}b']],
    // Not an expansion: text as it is.
    ['x{a}', ['x{a}']],
    ['{a,b', ['{a,b']],
    ['{a..}', ['{a..}']],
    ['{1..b}', ['{1..b}']],
  ])('%s', (text, words) => {
    expect(texts(bare(text))).toEqual(words);
  });

  it('leaves quoted braces as text', () => {
    expect(texts([{ text: '{a,b}', glob: false }])).toEqual(['{a,b}']);
  });

  it('takes braces that would make more than 64 words for any text at all', () => {
    for (const text of ['x{1..100}y', '{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}.json']) {
      const expanded = expandBraces(bare(text));
      expect(expanded).toHaveLength(1);
      expect(expanded[0]!.some((piece) => 'computed' in piece)).toBe(true);
    }
  });
});
