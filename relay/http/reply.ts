import type { Context } from 'hono';
import { refusalResponse, type RelayResult } from './relayError.ts';

/** A fleet's answer as the client receives it: the value (Fleet.ts versioned it), or the error body. */
export function reply<T>(c: Context, result: RelayResult<T>, status: 200 | 201 | 202 = 200): Response {
  return result.ok ? c.json(result.value as object, status) : refusalResponse(result);
}
