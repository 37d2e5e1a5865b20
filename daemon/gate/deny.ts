import type { BlockReason, GateAnswer } from '../socket/localApi.ts';

/** A deny, with the code callers branch on and the reason a person reads. */
export const deny = (blockReason: BlockReason, reason: string, requestId?: string): GateAnswer => ({
  decision: 'deny',
  reason,
  blockReason,
  ...(requestId ? { requestId } : {}),
});
