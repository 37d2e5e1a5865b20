import type { AuditLog } from '../audit/auditLog.ts';
import type { StateStore } from '../state/stateStore.ts';

/** Why nobody here waits for a request any more (docs/daemon.md). */
export type WithdrawalReason = 'caller_gone' | 'frozen' | 'reported' | 'daemon_stopped' | 'daemon_restarted';

/** What the callers of a request hear, and the audit says, once every one of them hung up. */
export const NOBODY_WAITS = 'withdrawn: every caller stopped waiting';

/**
 * Withdraws a request nobody here waits for: from now on this host refuses any answer to it
 * (code `withdrawn`), and the audit says why. Only a pending request is withdrawn; true if this
 * one was. Withdrawing never allows anything: it only closes a request. The relay is told next
 * (RelayClient.withdrawRequest), best effort: one that cannot be reached lets it expire there.
 */
export function recordWithdrawal(
  store: StateStore,
  audit: AuditLog,
  requestId: string,
  why: WithdrawalReason,
): boolean {
  if (!store.settleRequest(requestId, 'withdrawn')) return false;
  audit.append({ event: 'withdrawn', requestId, why });
  return true;
}

/**
 * At start, the requests a previous run left pending: their callers' connections died with it,
 * so nobody waits for them. Withdrawn here at once, before the relay can replay an answer to
 * one; the relay is told once it can be reached. Returns their ids.
 */
export function withdrawLeftBehind(store: StateStore, audit: AuditLog): string[] {
  return store
    .pendingRequestIds()
    .filter((requestId) => recordWithdrawal(store, audit, requestId, 'daemon_restarted'));
}
