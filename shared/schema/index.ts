// In the modules the phone app bundles (shared/, pwa/), a schema built at a module's top level is
// marked `/* @__PURE__ */` (`= /* @__PURE__ */ f.object(…)`), and a helper that builds fields
// `/* @__NO_SIDE_EFFECTS__ */`: a bundle then leaves out those it never uses, calls inside them too. The app ships under a 40 KB budget, and its worker imports modules whose other schemas it
// does not need (200 bytes gzipped, both).
export type { Field, FieldSpec, Infer, OptionalField } from './field.ts';
export * as f from './fields.ts';
export type { ObjectOf } from './fields.ts';
export { MAX_BODY_BYTES, parse, parseJson } from './parse.ts';
