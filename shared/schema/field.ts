import { LatchError, type LatchErrorCode } from '../errors.ts';

/**
 * What a field accepts, as data: parsers check against it, and the tests build random valid
 * values from it (tests/support/arbitraries.ts), so a rule is written once.
 */
export type FieldSpec =
  | { kind: 'id' }
  | { kind: 'text'; maxBytes: number; multiline: boolean }
  | { kind: 'base64url'; minBytes: number; maxBytes: number }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'boolean' }
  | { kind: 'literal'; value: string | number }
  | { kind: 'oneOf'; values: readonly string[] }
  | { kind: 'url'; maxBytes: number }
  | { kind: 'array'; item: Field<unknown>; maxItems: number }
  | { kind: 'object'; fields: Readonly<Record<string, Field<unknown>>> }
  | { kind: 'variant'; tag: string; variants: Readonly<Record<string, Field<unknown>>> };

export interface Field<T> {
  readonly spec: FieldSpec;
  readonly optional: boolean;
  /** Returns the accepted value or throws a LatchError whose message names `path`. */
  check(input: unknown, path: string): T;
}

export interface OptionalField<T> extends Field<T | undefined> {
  readonly optional: true;
}

export type Infer<F> = F extends Field<infer T> ? T : never;

export function refuse(code: LatchErrorCode, path: string, message: string): never {
  throw new LatchError(code, `${path || 'message'}: ${message}`);
}
