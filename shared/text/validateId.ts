import { fail, ok, type Result } from '../errors.ts';
import { utf8Length } from '../encoding/bytes.ts';
import { isControl, isInvisible, isLoneSurrogate } from './invisibleCharacters.ts';

const MAX_ID_BYTES = 128;
const FORBIDDEN = /[\s/?#%]/u;

/**
 * Ids are never cleaned, only accepted or refused (design.md): 1–128 UTF-8 bytes, no whitespace,
 * no control or invisible character, none of `/ ? # %` (ids end up in URL paths, where a `%`
 * would let two spellings, or one no decoder reads, name the same id).
 */
export function validateId(id: unknown): Result<string> {
  if (typeof id !== 'string') return fail('invalid_id', 'an id must be a string');
  const bytes = utf8Length(id);
  if (bytes < 1 || bytes > MAX_ID_BYTES) return fail('invalid_id', `an id has 1 to ${MAX_ID_BYTES} bytes`);
  if (FORBIDDEN.test(id)) return fail('invalid_id', 'an id has no whitespace and none of / ? # %');
  for (const character of id) {
    const codePoint = character.codePointAt(0)!;
    if (isControl(codePoint) || isInvisible(codePoint) || isLoneSurrogate(codePoint)) {
      return fail('invalid_id', 'an id has no control or invisible character');
    }
  }
  return ok(id);
}
