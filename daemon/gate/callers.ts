import type { Conversation } from './conversation.ts';

type Pending = { requestId: string; exp: number };

/**
 * The callers waiting on one ask: the first, and every duplicate that joined it (see CallIds.dedupKey).
 * Each hears the request id and deadline once the phones are asked, whenever it joined. Each may
 * hang up; once the last one has, `onAllGone` hears the request they waited on, as soon as there
 * is one (and `whileAsking`'s, while the relay still holds it). A caller without a `gone` signal
 * (Latch asking for itself) never leaves.
 */
export class Callers {
  readonly #onAllGone: (requestId: string) => void;
  readonly #untold: Conversation[] = [];
  #count = 0;
  #allGone = false;
  #pending: Pending | undefined;
  /** What the last hang-up does while the relay still holds the request's POST (whileAsking). */
  #beforeAsked: (() => void) | undefined;

  constructor(onAllGone: (requestId: string) => void) {
    this.#onAllGone = onAllGone;
  }

  join(conversation: Conversation): void {
    this.#count += 1;
    if (this.#pending) conversation.onAsked?.(this.#pending);
    else this.#untold.push(conversation);
    const { gone } = conversation;
    if (gone?.aborted) this.#leave();
    else gone?.addEventListener('abort', () => this.#leave(), { once: true });
  }

  /**
   * The relay is being given the request: until it has answered (asked), the last hang-up runs
   * `onAllGone` (at once if every caller is gone already), so that an approval the phones give
   * meanwhile reaches nobody and leaves nothing behind. After it, `onAllGone` of the constructor.
   */
  whileAsking(onAllGone: () => void): void {
    this.#beforeAsked = onAllGone;
    if (this.#allGone) onAllGone();
  }

  /** The phones were asked: every caller hears it, and the request is what a last hang-up withdraws. */
  asked(pending: Pending): void {
    this.#beforeAsked = undefined;
    this.#pending = pending;
    for (const conversation of this.#untold.splice(0)) conversation.onAsked?.(pending);
    if (this.#allGone) this.#onAllGone(pending.requestId);
  }

  #leave(): void {
    this.#count -= 1;
    if (this.#count > 0) return;
    this.#allGone = true;
    if (this.#pending) this.#onAllGone(this.#pending.requestId);
    else this.#beforeAsked?.();
  }
}
