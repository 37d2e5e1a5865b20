import { fromUtf8 } from '../encoding/bytes.ts';
import { fail, LatchError, ok, type Result } from '../errors.ts';
import type { Field } from './field.ts';

/** The largest JSON body any peer accepts (design.md: every body has a size limit). */
export const MAX_BODY_BYTES = 64 * 1024;

/** Checks an already-decoded value. Never throws: a refusal is a Result with a code. */
export function parse<T>(schema: Field<T>, input: unknown): Result<T> {
  try {
    return ok(schema.check(input, ''));
  } catch (error) {
    if (error instanceof LatchError) return { ok: false, error };
    throw error;
  }
}

/** Decodes and checks a JSON text or its UTF-8 bytes, refusing oversized input before parsing it. */
export function parseJson<T>(
  schema: Field<T>,
  json: string | Uint8Array,
  maxBytes: number = MAX_BODY_BYTES,
): Result<T> {
  // A string's UTF-8 length is at most 3 × its UTF-16 length, so only a long one needs encoding.
  const size =
    typeof json === 'string'
      ? json.length * 3 <= maxBytes
        ? 0
        : new TextEncoder().encode(json).length
      : json.length;
  if (size > maxBytes) return fail('body_too_large', `the body is over ${maxBytes} bytes`);
  let decoded: unknown;
  try {
    decoded = JSON.parse(typeof json === 'string' ? json : fromUtf8(json));
  } catch {
    return fail('malformed_json', 'the body is not JSON in UTF-8');
  }
  return parse(schema, decoded);
}
