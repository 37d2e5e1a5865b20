import { describe, expect, it } from 'vitest';
import { validateId } from '../../shared/text/validateId.ts';
import { expectRefused } from '../support/expectRefused.ts';

describe('validateId', () => {
  it.each(['a', 'req_01HZX-9', 'AAECAwQFBgcICQoLDA0ODw', 'host.example:1', 'ünïcödé', 'x'.repeat(128)])(
    'accepts %s',
    (id) => {
      expect(validateId(id)).toEqual({ ok: true, value: id });
    },
  );

  it.each([
    ['an empty string', ''],
    ['129 bytes', 'x'.repeat(129)],
    ['65 two-byte characters (130 bytes)', 'é'.repeat(65)],
    ['a space', 'a b'],
    ['a tab', 'a\tb'],
    ['a newline', 'a\n'],
    ['a no-break space', 'a\u00a0b'],
    ['a slash', 'a/b'],
    ['a question mark', 'a?b'],
    ['a hash', 'a#b'],
    ['a percent sign', 'a%b'],
    ['a NUL', 'a\u0000b'],
    ['DEL', 'a\u007fb'],
    ['a C1 control', 'a\u0085b'],
    ['a bidi override', 'a\u202eb'],
    ['a zero-width space', 'a\u200bb'],
    ['a tag character', 'a\u{e0041}'],
    ['a lone surrogate', 'a\ud800'],
  ])('refuses %s', (_what, id) => {
    expectRefused(validateId(id), 'invalid_id');
  });

  it.each([[42], [null], [undefined], [['a']], [{ id: 'a' }]])('refuses the non-string %j', (value) => {
    expectRefused(validateId(value), 'invalid_id');
  });
});
