import { createHash } from 'node:crypto';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import type { GateRequest } from '../socket/localApi.ts';

/**
 * The key two calls share only when they are one call: the same agent session and tool call,
 * and the same content, every field of it. A second call that reuses a pending call's ids with
 * another command is another request, never a join. The relay sees the key, not what it hashes.
 * Undefined without a session and a tool call id: such calls are never joined. Nor is a call that
 * can answer a terminal fallback: the fallback is asked on the first caller's connection only, so
 * a caller who sent the same call first (the agent, predicting its hook's) would answer for the
 * person's terminal, and the calls joined to it would hear that allow.
 */
export function dedupKey(request: GateRequest): string | undefined {
  if (!request.session || !request.toolUseId || request.interactive) return undefined;
  // Sorted members; JSON.stringify escapes what canonical JSON would refuse (lone surrogates).
  const content = JSON.stringify(Object.entries(request).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return toBase64url(createHash('sha256').update(`latch dedup v1\0${content}`).digest().subarray(0, 18));
}
