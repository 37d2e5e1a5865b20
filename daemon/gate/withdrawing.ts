import type { AuditLog } from '../audit/auditLog.ts';
import type { KillSwitch } from '../kill-switch/killSwitch.ts';
import type { RelayClient } from '../relay/relayClient.ts';
import type { StateStore } from '../state/stateStore.ts';
import type { GateAnswer } from '../socket/localApi.ts';
import { deny, frozenDeny, reportedDeny } from './deny.ts';
import type { Waiting } from './waiting.ts';
import { NOBODY_WAITS, recordWithdrawal, type WithdrawalReason } from './withdrawal.ts';

export interface WithdrawingOptions {
  store: StateStore;
  audit: AuditLog;
  relay: RelayClient;
  killSwitch: KillSwitch;
  waiting: Waiting;
}

/**
 * Takes back what the phones were asked once nobody here can use the answer: a freeze, every
 * caller gone, the daemon stopping. Each caller still waiting is refused with the reason.
 */
export class Withdrawing {
  readonly #options: WithdrawingOptions;

  constructor(options: WithdrawingOptions) {
    this.#options = options;
    const { killSwitch } = options;
    // A freeze refuses at once every request still pending: those waited for, and those whose
    // POST the relay still holds (their asker checks the freeze when it answers). Withdrawn, a
    // request takes no approval after the resume either, nor the rule one would bring.
    killSwitch.onChange((state) => {
      if (!state.frozen) return;
      for (const requestId of options.store.pendingRequestIds())
        this.#refuse(requestId, 'frozen', frozenDeny(state.reason, requestId));
    });
  }

  /**
   * A phone reported an agent session as unexpected: every request of it still pending is refused
   * (but the reported one, which its own deny ends).
   */
  sessionReported(conversation: string, until: number, reported: string): void {
    for (const requestId of this.#options.store.pendingRequestIds(conversation))
      if (requestId !== reported) this.#refuse(requestId, 'reported', reportedDeny(until, requestId));
  }

  /** Every caller of a request hung up: the phones are no longer asked, and nothing runs. */
  nobodyWaits(requestId: string): void {
    const { waiting } = this.#options;
    if (!waiting.isWaiting(requestId)) return;
    void this.#withdraw(requestId, 'caller_gone');
    waiting.settle(requestId, deny('denied', NOBODY_WAITS, requestId));
  }

  /**
   * The daemon stops: every request still waiting is withdrawn, its callers refused. Resolves
   * once the relay heard of each, or after `withinMs`, whichever is first.
   */
  async withdrawAll(withinMs: number): Promise<void> {
    const { waiting } = this.#options;
    const told = waiting.requestIds().map((requestId) => {
      const telling = this.#withdraw(requestId, 'daemon_stopped');
      // Unavailable, not a person's no: the same answer as a daemon that cannot be reached.
      waiting.settle(
        requestId,
        deny('daemon_unreachable', 'daemon_unreachable: the Latch daemon is stopping', requestId),
      );
      return telling;
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(told),
      new Promise((resolve) => (timer = setTimeout(resolve, withinMs))),
    ]).finally(() => clearTimeout(timer));
  }

  #refuse(requestId: string, why: WithdrawalReason, answer: GateAnswer): void {
    void this.#withdraw(requestId, why);
    this.#options.waiting.settle(requestId, answer);
  }

  /** Withdraws a request here, then at the relay in the background (gate/withdrawal). */
  #withdraw(requestId: string, why: WithdrawalReason): Promise<unknown> {
    const { store, audit, relay } = this.#options;
    return recordWithdrawal(store, audit, requestId, why)
      ? relay.withdrawRequest(requestId)
      : Promise.resolve();
  }
}
