import { utf8Length } from '../encoding/bytes.ts';
import { fromBase64url } from '../encoding/base64url.ts';
import { LatchError } from '../errors.ts';
import { sanitizeText } from '../text/sanitizeText.ts';
import { validateId } from '../text/validateId.ts';
import { PROTOCOL_VERSION, type ProtocolVersion } from '../version.ts';
import { refuse, type Field, type FieldSpec, type Infer, type OptionalField } from './field.ts';

function field<T>(spec: FieldSpec, check: (input: unknown, path: string) => T): Field<T> {
  return { spec, optional: false, check };
}

export function id(): Field<string> {
  return field({ kind: 'id' }, (input, path) => {
    const result = validateId(input);
    if (!result.ok) refuse('invalid_id', path, result.error.message);
    return result.value;
  });
}

/**
 * Text already cleaned by sanitizeText and within `maxBytes`. The wire carries only clean text,
 * so that what a phone shows is byte for byte what was hashed; unclean text is refused, not
 * cleaned again.
 */
export function text(maxBytes: number, options: { multiline?: boolean } = {}): Field<string> {
  const multiline = options.multiline ?? false;
  return field({ kind: 'text', maxBytes, multiline }, (input, path) => {
    if (typeof input !== 'string') refuse('invalid_field', path, 'expected a string');
    if (utf8Length(input) > maxBytes) refuse('field_too_large', path, `over ${maxBytes} bytes`);
    if (sanitizeText(input, { maxBytes, multiline }).changed) {
      refuse('unclean_text', path, 'holds characters that cleaning removes');
    }
    return input;
  });
}

/** Bytes as unpadded base64url. The value stays a string; decode it where the bytes are used. */
export function base64url(minBytes: number, maxBytes: number = minBytes): Field<string> {
  const maxChars = Math.ceil((maxBytes * 4) / 3);
  return field({ kind: 'base64url', minBytes, maxBytes }, (input, path) => {
    if (typeof input !== 'string') refuse('invalid_field', path, 'expected a base64url string');
    // Refuse by length before decoding, so an oversized field costs nothing.
    if (input.length > maxChars) refuse('field_too_large', path, `over ${maxBytes} bytes`);
    let length: number;
    try {
      length = fromBase64url(input).length;
    } catch (error) {
      if (error instanceof LatchError) refuse(error.code, path, error.message);
      throw error;
    }
    if (length > maxBytes) refuse('field_too_large', path, `over ${maxBytes} bytes`);
    if (length < minBytes) refuse('invalid_field', path, `under ${minBytes} bytes`);
    return input;
  });
}

export function integer(min: number, max: number): Field<number> {
  return field({ kind: 'integer', min, max }, (input, path) => {
    if (typeof input !== 'number' || !Number.isSafeInteger(input)) {
      refuse('invalid_field', path, 'expected an integer');
    }
    if (input < min || input > max) refuse('invalid_field', path, `outside ${min}..${max}`);
    return input;
  });
}

/** Milliseconds since the epoch, from 2020 to 2200: anything else is a unit or clock mistake. */
export function timestamp(): Field<number> {
  return integer(1_577_836_800_000, 7_258_118_400_000);
}

export function boolean(): Field<boolean> {
  return field({ kind: 'boolean' }, (input, path) => {
    if (typeof input !== 'boolean') refuse('invalid_field', path, 'expected true or false');
    return input;
  });
}

export function literal<const T extends string | number>(value: T): Field<T> {
  return field({ kind: 'literal', value }, (input, path) => {
    if (input !== value) refuse('invalid_field', path, `expected ${JSON.stringify(value)}`);
    return value;
  });
}

/** The `v` field: anything but this version is `unknown_version`. */
export function version(): Field<ProtocolVersion> {
  return field({ kind: 'literal', value: PROTOCOL_VERSION }, (input, path) => {
    if (input !== PROTOCOL_VERSION)
      refuse('unknown_version', path, `only version ${PROTOCOL_VERSION} is spoken`);
    return PROTOCOL_VERSION;
  });
}

export function oneOf<const T extends readonly string[]>(values: T): Field<T[number]> {
  return field({ kind: 'oneOf', values }, (input, path) => {
    if (typeof input !== 'string' || !values.includes(input)) {
      refuse('invalid_field', path, `expected one of ${values.join(', ')}`);
    }
    return input as T[number];
  });
}

/** An https: URL (http: only for loopback, where the local push stand-in lives). */
export function url(maxBytes: number): Field<string> {
  return field({ kind: 'url', maxBytes }, (input, path) => {
    if (typeof input !== 'string') refuse('invalid_field', path, 'expected a URL');
    if (utf8Length(input) > maxBytes) refuse('field_too_large', path, `over ${maxBytes} bytes`);
    const parsed = parseUrl(input);
    const loopback = parsed?.hostname === '127.0.0.1' || parsed?.hostname === 'localhost';
    const secure = parsed?.protocol === 'https:' || (parsed?.protocol === 'http:' && loopback);
    if (!parsed || !secure || parsed.username || parsed.password || parsed.href !== input) {
      refuse('invalid_field', path, 'expected a normalised https URL without credentials');
    }
    return input;
  });
}

function parseUrl(input: string): URL | undefined {
  try {
    return new URL(input);
  } catch {
    return undefined;
  }
}

export function array<T>(item: Field<T>, maxItems: number): Field<T[]> {
  return field({ kind: 'array', item, maxItems }, (input, path) => {
    if (!Array.isArray(input)) refuse('invalid_field', path, 'expected an array');
    if (input.length > maxItems) refuse('field_too_large', path, `over ${maxItems} items`);
    return input.map((element, index) => item.check(element, `${path}[${index}]`));
  });
}

export function optional<T>(inner: Field<T>): OptionalField<T> {
  return {
    spec: inner.spec,
    optional: true,
    check: (input, path) => (input === undefined ? undefined : inner.check(input, path)),
  };
}

type Shape = Record<string, Field<unknown>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type RequiredKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends OptionalField<unknown> ? never : K;
}[keyof S];
type OptionalKeys<S extends Shape> = Exclude<keyof S, RequiredKeys<S>>;
export type ObjectOf<S extends Shape> = Simplify<
  { [K in RequiredKeys<S>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Exclude<Infer<S[K]>, undefined> }
>;

function isPlainObject(input: unknown): input is Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input);
}

/**
 * A JSON object with exactly these members. Members are checked in the order written (so `v`,
 * written first, is judged before anything else), then any member not listed is refused.
 */
export function object<S extends Shape>(shape: S): Field<ObjectOf<S>> {
  return field({ kind: 'object', fields: shape }, (input, path) => {
    if (!isPlainObject(input)) refuse('invalid_field', path, 'expected an object');
    const output: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(shape)) {
      const memberPath = path ? `${path}.${name}` : name;
      const present = Object.hasOwn(input, name) && input[name] !== undefined;
      if (!present && !member.optional) refuse('missing_field', memberPath, 'is required');
      if (present) output[name] = member.check(input[name], memberPath);
    }
    for (const name of Object.keys(input)) {
      if (!Object.hasOwn(shape, name))
        refuse('unknown_field', path, `unknown member ${JSON.stringify(name.slice(0, 64))}`);
    }
    return output as ObjectOf<S>;
  });
}

/** One of several objects, told apart by the literal string member `tag`. */
export function variant<const Tag extends string, V extends Record<string, Field<Record<string, unknown>>>>(
  tag: Tag,
  variants: V,
): Field<Infer<V[keyof V]>> {
  return field({ kind: 'variant', tag, variants }, (input, path) => {
    if (!isPlainObject(input)) refuse('invalid_field', path, 'expected an object');
    // A message's version is judged before its tag: a newer peer may have newer tags.
    if (Object.hasOwn(input, 'v') && input['v'] !== PROTOCOL_VERSION) {
      refuse('unknown_version', path ? `${path}.v` : 'v', `only version ${PROTOCOL_VERSION} is spoken`);
    }
    const name = input[tag];
    if (typeof name !== 'string' || !Object.hasOwn(variants, name)) {
      refuse(
        Object.hasOwn(input, tag) ? 'invalid_field' : 'missing_field',
        `${path ? `${path}.` : ''}${tag}`,
        `expected one of ${Object.keys(variants).join(', ')}`,
      );
    }
    return variants[name]!.check(input, path) as Infer<V[keyof V]>;
  });
}
