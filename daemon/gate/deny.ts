import type { BlockReason, GateAnswer } from '../socket/localApi.ts';

/** A deny, with the code callers branch on and the reason a person reads. */
export const deny = (blockReason: BlockReason, reason: string, requestId?: string): GateAnswer => ({
  decision: 'deny',
  reason,
  blockReason,
  ...(requestId ? { requestId } : {}),
});

/** The deny of every call while the fleet is frozen. */
export const frozenDeny = (reason: string | null, requestId?: string): GateAnswer =>
  deny('kill_switch', `kill_switch: the fleet is frozen (${reason ?? 'no reason given'})`, requestId);
