import { createHmac } from 'node:crypto';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import type { GateRequest } from '../socket/localApi.ts';
import type { StateStore } from '../state/stateStore.ts';

/**
 * The ids of a call that the relay sees beside its sealed details: its dedup key and its agent
 * session's conversation. Each is an HMAC-SHA-256 under this host's own secret (StateStore.callKey),
 * which the relay never receives: a plain hash of what a call holds would let the relay confirm a
 * guess of it offline (a command, a session named by a program), the guess the details' `salt`
 * closes for `requestHash`. Joining needs only that the same call gives the same id on one host.
 */
export class CallIds {
  readonly #key: Uint8Array;

  constructor(key: Uint8Array) {
    this.#key = key;
  }

  static of(store: StateStore): CallIds {
    return new CallIds(store.callKey());
  }

  /**
   * The key two calls share only when they are one call: the same agent session and tool call,
   * and the same content, every field of it. A second call that reuses a pending call's ids with
   * another command is another request, never a join. Undefined without a session and a tool
   * call id: such calls are never joined. Nor is a call that can answer a terminal fallback: the
   * fallback is asked on the first caller's connection only, so a caller who sent the same call
   * first (the agent, predicting its hook's) would answer for the person's terminal, and the
   * calls joined to it would hear that allow.
   */
  dedupKey(request: GateRequest): string | undefined {
    if (!request.session || !request.toolUseId || request.interactive) return undefined;
    // Sorted members; JSON.stringify escapes what canonical JSON would refuse (lone surrogates).
    const content = JSON.stringify(Object.entries(request).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return this.#id(`latch dedup v2\0${content}`, 18);
  }

  /**
   * The relay's id for an agent session: which requests are of one conversation (its push caps,
   * the app's "deny the session"). `none` for a call that named no session. This host's own
   * records name a session by conversationId, which never reaches the relay.
   */
  conversation(session: string | undefined): string {
    return session ? this.#id(`latch conversation v1\0${session}`, 12) : 'none';
  }

  #id(content: string, bytes: number): string {
    return toBase64url(createHmac('sha256', this.#key).update(content).digest().subarray(0, bytes));
  }
}
