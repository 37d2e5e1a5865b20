/**
 * Remembers which tokens were used. `consume` must be atomic: of any number of concurrent calls
 * with one key, exactly one returns true. A key may be forgotten once `expiresAt` has passed,
 * because an expired token is refused before it is consumed.
 */
export interface SingleUseStore {
  consume(key: string, expiresAt: number): boolean | Promise<boolean>;
}

/** For tests and short-lived processes; the daemon brings a store that survives restarts. */
export class MemorySingleUseStore implements SingleUseStore {
  readonly #used = new Map<string, number>();
  readonly #clock: () => number;
  #lastSweep = 0;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  consume(key: string, expiresAt: number): boolean {
    this.#forgetExpired();
    if (this.#used.has(key)) return false;
    this.#used.set(key, expiresAt);
    return true;
  }

  /** Sweeps at most once a minute, so a consume costs O(1) on average. */
  #forgetExpired(): void {
    const now = this.#clock();
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    for (const [key, expiresAt] of this.#used) {
      if (expiresAt < now) this.#used.delete(key);
    }
  }
}
