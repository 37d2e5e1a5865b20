import { LatchError } from '../errors.ts';
import { sha256, utf8 } from '../encoding/bytes.ts';

/** A JSON value as the protocol hashes and signs it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The JSON Canonicalization Scheme, RFC 8785: numbers as ECMAScript prints them (§3.2.2.3),
 * strings with the minimal escapes of JSON.stringify (§3.2.2.2), object members sorted by their
 * names' UTF-16 code units (§3.2.3), no whitespace. A member whose value is `undefined` is left
 * out, as JSON.stringify does, so optional fields need no special casing.
 *
 * Refuses what has no I-JSON form (RFC 7493): non-finite numbers and lone surrogates.
 */
export function canonicalize(value: unknown): string {
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new LatchError('invalid_field', 'a number must be finite');
      return JSON.stringify(value);
    case 'string':
      if (LONE_SURROGATE.test(value)) {
        throw new LatchError('invalid_field', 'a string holds a lone surrogate');
      }
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      // Array.from visits holes too (as undefined, refused); map would skip them.
      if (Array.isArray(value)) return `[${Array.from(value, (item) => canonicalize(item)).join(',')}]`;
      if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) {
        throw new LatchError('invalid_field', 'only plain objects have a canonical form');
      }
      const members = Object.entries(value)
        .filter(([, member]) => member !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, member]) => `${canonicalize(name)}:${canonicalize(member)}`);
      return `{${members.join(',')}}`;
    }
    default:
      throw new LatchError('invalid_field', `a ${typeof value} has no canonical form`);
  }
}

export function canonicalBytes(value: unknown): Uint8Array<ArrayBuffer> {
  return utf8(canonicalize(value));
}

/** SHA-256 over the canonical form: the one way the protocol hashes a structure. */
export function canonicalHash(value: unknown): Promise<Uint8Array<ArrayBuffer>> {
  return sha256(canonicalBytes(value));
}
