/**
 * `latch` as a script reads it: exit codes that mean one thing each, usage errors that exit 2
 * wherever they come from, and `--json` objects of a documented shape (docs/daemon.md#for-scripts).
 */
import { expect } from 'vitest';
import type { Ran } from './latchMachine.ts';

/** The one JSON object a `--json` command prints: one line, nothing else on stdout. */
export function json<T>(ran: Ran): T {
  expect(ran.stdout.endsWith('\n')).toBe(true);
  expect(ran.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(ran.stdout) as T;
}

/** A time in `--json` output: ISO 8601, UTC, to the millisecond. */
export const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
