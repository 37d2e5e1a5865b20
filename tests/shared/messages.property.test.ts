import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../shared/canonical/canonicalize.ts';
import { LATCH_ERROR_CODES, LatchError } from '../../shared/errors.ts';
import { MESSAGE_SCHEMAS } from '../../shared/messages/catalog.ts';
import { parse, parseJson } from '../../shared/schema/parse.ts';
import { arbitraryFor, mutatedFor } from '../support/arbitraries.ts';

const RUNS = 150;

/** A parser's contract: a Result, and on refusal a LatchError with a code. Nothing thrown. */
function expectTypedOutcome(outcome: () => ReturnType<typeof parse>): void {
  const result = outcome();
  if (!result.ok) {
    expect(result.error).toBeInstanceOf(LatchError);
    expect(LATCH_ERROR_CODES).toContain(result.error.code);
  }
}

describe.each(Object.entries(MESSAGE_SCHEMAS))('%s parser', (_name, schema) => {
  it('round-trips: parse(serialize(x)) is x', () => {
    fc.assert(
      fc.property(arbitraryFor(schema), (message) => {
        const result = parseJson(schema, canonicalize(message));
        expect(result).toEqual({ ok: true, value: message });
      }),
      { numRuns: RUNS },
    );
  });

  it('answers random JSON with a typed error, never an exception', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => expectTypedOutcome(() => parse(schema, value))),
      { numRuns: RUNS },
    );
  });

  it('answers random text and bytes with a typed error, never an exception', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.uint8Array()), (body) => {
        const result = parseJson(schema, body);
        expect(result.ok).toBe(false);
        expectTypedOutcome(() => result);
      }),
      { numRuns: RUNS },
    );
  });

  it('answers mutated messages with a typed error or a valid value, never an exception', () => {
    fc.assert(
      fc.property(mutatedFor(schema), (value) => expectTypedOutcome(() => parse(schema, value))),
      { numRuns: RUNS * 2 },
    );
  });

  it('refuses any unknown member added to a valid message', () => {
    fc.assert(
      fc.property(arbitraryFor(schema), fc.string({ minLength: 1, maxLength: 8 }), (message, name) => {
        const extended = { ...(message as object), [`x_${name}`]: 1 };
        const result = parse(schema, extended);
        expect(result.ok ? 'accepted' : result.error.code).toBe('unknown_field');
      }),
      { numRuns: 50 },
    );
  });

  it('refuses any other version first', () => {
    fc.assert(
      fc.property(
        arbitraryFor(schema),
        fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
        (message, v) => {
          fc.pre(v !== 1);
          const result = parse(schema, { ...(message as object), v, unexpected: true });
          expect(result.ok ? 'accepted' : result.error.code).toBe('unknown_version');
        },
      ),
      { numRuns: 50 },
    );
  });
});
