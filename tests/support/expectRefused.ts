import { expect } from 'vitest';
import type { LatchErrorCode, Result } from '../../shared/errors.ts';

/** Asserts a refusal with exactly this code; an acceptance reads as "accepted" in the failure. */
export function expectRefused(result: Result<unknown>, code: LatchErrorCode): void {
  expect(result.ok ? 'accepted' : result.error.code).toBe(code);
}
