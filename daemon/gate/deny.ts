import type { BlockReason, GateAnswer } from '../socket/localApi.ts';

/** A deny, with the code callers branch on and the reason a person reads. */
export const deny = (blockReason: BlockReason, reason: string, requestId?: string): GateAnswer => ({
  decision: 'deny',
  reason,
  blockReason,
  ...(requestId ? { requestId } : {}),
});

/** What an agent is told of a freeze, by every door. */
export const fleetFrozenText = (reason: string | null) =>
  `the fleet is frozen (${reason ?? 'no reason given'})`;

/** The deny of every call while the fleet is frozen. */
export const frozenDeny = (reason: string | null, requestId?: string): GateAnswer =>
  deny('kill_switch', `kill_switch: ${fleetFrozenText(reason)}`, requestId);

/** The deny of every call of an agent session a phone reported as unexpected, until `until`. */
export const reportedDeny = (until: number, requestId?: string): GateAnswer =>
  deny(
    'reported',
    `reported: a phone reported this agent session as unexpected; it is refused until ${new Date(until).toISOString()}`,
    requestId,
  );
