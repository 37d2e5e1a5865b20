import fc from 'fast-check';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import type { Field } from '../../shared/schema/field.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';
import { validateId } from '../../shared/text/validateId.ts';

/**
 * Random valid values for a schema, built from its FieldSpec so that the rules live in one place.
 * Sizes are kept small for speed, with the edges (empty, maximum) drawn now and then.
 */
export function arbitraryFor(field: Field<unknown>): fc.Arbitrary<unknown> {
  const spec = field.spec;
  switch (spec.kind) {
    case 'id':
      return fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }).filter((id) => validateId(id).ok);
    case 'text':
      return fc
        .string({ maxLength: 80, unit: 'binary' })
        .map((text) => sanitizeText(text, { maxBytes: spec.maxBytes, multiline: spec.multiline }).text);
    case 'base64url':
      return fc
        .oneof(
          fc.uint8Array({ minLength: spec.minBytes, maxLength: Math.min(spec.maxBytes, spec.minBytes + 64) }),
          fc.uint8Array({ minLength: spec.maxBytes, maxLength: spec.maxBytes }),
        )
        .map(toBase64url);
    case 'integer':
      return fc.bigInt({ min: BigInt(spec.min), max: BigInt(spec.max) }).map(Number);
    case 'boolean':
      return fc.boolean();
    case 'literal':
      return fc.constant(spec.value);
    case 'oneOf':
      return fc.constantFrom(...spec.values);
    case 'url':
      return fc
        .webUrl({ validSchemes: ['https'], withQueryParameters: true })
        .map((url) => new URL(url).href)
        .filter(
          (url) => utf8Length(url) <= spec.maxBytes && !new URL(url).username && !new URL(url).password,
        );
    case 'array':
      return fc.array(arbitraryFor(spec.item), { maxLength: Math.min(spec.maxItems, 3) });
    case 'object': {
      const members = Object.fromEntries(
        Object.entries(spec.fields).map(([name, member]) => [name, arbitraryFor(member)]),
      );
      const requiredKeys = Object.entries(spec.fields)
        .filter(([, member]) => !member.optional)
        .map(([name]) => name);
      return fc.record(members, { requiredKeys });
    }
    case 'variant':
      return fc.oneof(...Object.values(spec.variants).map(arbitraryFor));
  }
}

/**
 * A valid value with one thing wrong: a member dropped, an unknown member added, or a value
 * somewhere replaced by arbitrary JSON. Most are invalid; all must be refused or accepted
 * without anything being thrown.
 */
export function mutatedFor(field: Field<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      arbitraryFor(field),
      fc.nat(),
      fc.constantFrom('drop', 'add', 'replace'),
      fc.jsonValue({ maxDepth: 2 }),
      fc.string({ maxLength: 8 }),
    )
    .map(([value, pick, mutation, replacement, name]) => mutate(value, pick, mutation, replacement, name));
}

function mutate(
  value: unknown,
  pick: number,
  mutation: 'drop' | 'add' | 'replace',
  replacement: unknown,
  name: string,
): unknown {
  const objects: Record<string, unknown>[] = [];
  const collect = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(collect);
    else if (typeof node === 'object' && node !== null) {
      objects.push(node as Record<string, unknown>);
      Object.values(node).forEach(collect);
    }
  };
  const copy = structuredClone(value);
  collect(copy);
  const target = objects[pick % Math.max(objects.length, 1)];
  if (!target) return replacement;
  const keys = Object.keys(target);
  const key = keys[pick % Math.max(keys.length, 1)];
  if (mutation === 'add') target[`${name}_extra`] = replacement;
  else if (key === undefined) return replacement;
  else if (mutation === 'drop') delete target[key];
  else target[key] = replacement;
  return copy;
}
