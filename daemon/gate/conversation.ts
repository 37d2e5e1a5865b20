import type { FallbackOffer } from '../socket/localApi.ts';

/** The caller's side of one gated call, as the socket carries it. */
export interface Conversation {
  /** Hears the request id and deadline once a phone is asked, for the caller's countdown. */
  onAsked?(pending: { requestId: string; exp: number }): void;
  /**
   * Offers the caller a terminal fallback, on the connection that asked and no other; resolves
   * with what it typed, or undefined (declined, gone, or no answer by `offer.exp`).
   */
  askOnTerminal?(offer: FallbackOffer): Promise<string | undefined>;
  /** Aborts when the caller hangs up before its answer (killed, cancelled, timed out). */
  gone?: AbortSignal;
}
