export type { Field, FieldSpec, Infer, OptionalField } from './field.ts';
export * as f from './fields.ts';
export type { ObjectOf } from './fields.ts';
export { MAX_BODY_BYTES, parse, parseJson } from './parse.ts';
