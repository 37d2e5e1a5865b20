import type { AuditLog } from '../audit/auditLog.ts';
import { daemonLog as log } from '../output/daemonLog.ts';
import type { GateAnswer } from '../socket/localApi.ts';
import type { StateStore } from '../state/stateStore.ts';
import { Callers } from './callers.ts';
import type { Conversation } from './conversation.ts';
import { deny } from './deny.ts';
import type { PushFatigue } from './pushFatigue.ts';

interface Waiter {
  settle(answer: GateAnswer): void;
  timer: NodeJS.Timeout;
}

export interface WaitingOptions {
  store: StateStore;
  audit: AuditLog;
  fatigue: PushFatigue;
  /** Every caller of a request hung up (see Callers). */
  onAllGone(requestId: string): void;
}

/**
 * The callers waiting for the phones: one ask per dedup key, which duplicates join; one waiter
 * per request, settled once (by an answer, a withdrawal or its deadline) with what every caller
 * of it hears.
 */
export class Waiting {
  readonly #options: WaitingOptions;
  readonly #waiting = new Map<string, Waiter>();
  /**
   * Answers that came before anyone waited: a phone (or the relay) quicker than the relay's reply
   * to the request's POST, after which the asker starts waiting. Kept until it does, or drops it.
   */
  readonly #early = new Map<string, GateAnswer>();
  /**
   * The requests whose asker takes a phone's answer: from before the relay has them until the
   * asker stops waiting for the phones (it gave up on the relay, or settled).
   */
  readonly #listening = new Set<string>();
  readonly #byDedupKey = new Map<string, Promise<GateAnswer>>();
  /** Who waits on each ask in #byDedupKey: when all have hung up, its request is withdrawn. */
  readonly #callersByDedupKey = new Map<string, Callers>();

  constructor(options: WaitingOptions) {
    this.#options = options;
  }

  get pending(): number {
    return this.#waiting.size;
  }

  /** The requests a phone's answer is still awaited for. */
  requestIds(): string[] {
    return [...this.#waiting.keys()];
  }

  isWaiting(requestId: string): boolean {
    return this.#waiting.has(requestId);
  }

  /** The asker of this request is about to ask the phones, and takes their answer from now on. */
  listen(requestId: string): void {
    this.#listening.add(requestId);
  }

  /**
   * Whether a phone's answer to this request reaches anyone: an approval nobody takes is not
   * given, nor is the rule it brings (the caller hears a deny from elsewhere).
   */
  takesPhoneAnswer(requestId: string): boolean {
    return this.#listening.has(requestId) || this.#waiting.has(requestId);
  }

  /** One ask per key: a duplicate (same ids, same content: see CallIds.dedupKey) joins the pending one. */
  once(
    key: string,
    conversation: Conversation,
    ask: (callers: Callers) => Promise<GateAnswer>,
  ): Promise<GateAnswer> {
    const existing = this.#byDedupKey.get(key);
    if (existing) {
      // The joined call gets the first one's answer: the audit says which request answers it.
      this.#callersByDedupKey.get(key)?.join({
        ...conversation,
        onAsked: (pending) => {
          this.#options.audit.append({ event: 'joined', into: pending.requestId });
          conversation.onAsked?.(pending);
        },
      });
      return existing;
    }
    const callers = new Callers((requestId) => this.#options.onAllGone(requestId));
    callers.join(conversation);
    this.#callersByDedupKey.set(key, callers);
    const answer = ask(callers).finally(() => {
      this.#byDedupKey.delete(key);
      this.#callersByDedupKey.delete(key);
    });
    this.#byDedupKey.set(key, answer);
    return answer;
  }

  /** The answer to a request, or `expired` at its deadline; a second wait hears the same answer. */
  wait(requestId: string, exp: number): Promise<GateAnswer> {
    const early = this.#early.get(requestId);
    if (early) {
      this.#early.delete(requestId);
      this.#options.audit.append({
        event: 'decided',
        requestId,
        decision: early.decision,
        reason: early.reason,
      });
      return Promise.resolve(early);
    }
    const already = this.#waiting.get(requestId);
    if (already) {
      return new Promise((resolve) => {
        const previous = already.settle;
        already.settle = (answer) => {
          previous(answer);
          resolve(answer);
        };
      });
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#expire(requestId), Math.max(0, exp - Date.now()));
      this.#waiting.set(requestId, { settle: resolve, timer });
    });
  }

  /**
   * The asker will not wait for the phones' answer to this request after all: an early answer to
   * it is forgotten, and a later one is not taken.
   */
  drop(requestId: string): void {
    this.#early.delete(requestId);
    this.#listening.delete(requestId);
  }

  /**
   * Records the answer (only a pending request changes state) and gives it to whoever waits, once
   * the record is committed, with what the caller recorded before it in the same transaction; one
   * that settles a request nobody waits for yet is kept for its asker (#early).
   * A deny that cannot be recorded (a full disk) is given all the same: refusing is safe.
   */
  settle(requestId: string, answer: GateAnswer): void {
    const { store, fatigue, audit } = this.#options;
    const state =
      answer.decision === 'allow'
        ? 'approved'
        : answer.decision === 'deny' && answer.blockReason === 'expired'
          ? 'expired'
          : 'denied';
    const waiter = this.#waiting.get(requestId);
    try {
      store.db.transaction(
        () => {
          const settled = store.settleRequest(requestId, state);
          if (!waiter) {
            if (settled) store.db.afterCommit(() => this.#early.set(requestId, answer));
            return;
          }
          audit.append({ event: 'decided', requestId, decision: answer.decision, reason: answer.reason });
          // Should an outer transaction's commit fail, an allow's waiter stays for its deadline.
          store.db.afterCommit(() => this.#release(requestId, answer));
        },
        { immediate: true },
      );
    } catch (error) {
      if (answer.decision !== 'allow') this.#release(requestId, answer);
      throw error;
    } finally {
      fatigue.settled(requestId);
    }
  }

  /** The deadline's deny, given even where a full disk keeps it from being recorded. */
  #expire(requestId: string): void {
    try {
      this.settle(requestId, deny('expired', 'expired: no phone answered before the deadline', requestId));
    } catch (error) {
      log(`an expiry could not be recorded: ${(error as Error).message}`);
    }
  }

  #release(requestId: string, answer: GateAnswer): void {
    const waiter = this.#waiting.get(requestId);
    if (!waiter) return;
    clearTimeout(waiter.timer);
    this.#waiting.delete(requestId);
    waiter.settle(answer);
  }
}
