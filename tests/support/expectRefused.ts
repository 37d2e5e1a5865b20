import { expect } from 'vitest';
import type { RelayErrorCode } from '../../shared/errors.ts';
import type { LatchErrorCode, Result } from '../../shared/errors.ts';

/**
 * Asserts a refusal with exactly this code, and a reason in words for whoever reads the log or the
 * terminal; an acceptance reads as "accepted" in the failure.
 */
export function expectRefused(result: Result<unknown>, code: LatchErrorCode): void {
  expect(result.ok ? 'accepted' : result.error.code).toBe(code);
  expect(result.ok || result.error.message.trim()).not.toBe('');
}

/** The code of an HTTP refusal's `{ error: { code } }` body; undefined for any other body. */
export function refusalCodeOf(reply: { body: unknown }): RelayErrorCode | undefined {
  return (reply.body as { error?: { code?: RelayErrorCode } } | null)?.error?.code;
}

/** Asserts an HTTP refusal with exactly this status and code, both in one failure message. */
export function expectRefusedReply(
  reply: { status: number; body: unknown },
  status: number,
  code: RelayErrorCode,
): void {
  expect({ status: reply.status, code: refusalCodeOf(reply) }).toEqual({ status, code });
}
