import { connect } from 'node:net';
import {
  CallRefusedError,
  checkedSocketPath,
  DaemonBusyError,
  DaemonUnreachableError,
  type DaemonCallOptions,
} from './daemonSocket.ts';
import {
  DAEMON_BUSY,
  MAX_REQUEST_LINE_BYTES,
  readGateLine,
  type FallbackOffer,
  type GateAnswer,
} from './localApi.ts';
import { readLines } from './readLines.ts';

export interface GateConversation {
  /** Hears the request id and deadline once a phone is asked. */
  onPending?(pending: { requestId: string; exp: number }): void;
  /**
   * The daemon offers a terminal fallback: resolve with what the person typed, or undefined to
   * decline. The answer goes back on this same connection, the only one the daemon accepts it on.
   */
  onFallback?(offer: FallbackOffer): Promise<string | undefined>;
  /** The moment (ms since the epoch) past which the caller must have its answer, whatever happens. */
  deadline?: number;
  /**
   * The caller no longer wants the answer (an MCP client cancelled the call): the connection
   * closes, so the daemon withdraws the request from the phones, and the call rejects.
   */
  signal?: AbortSignal;
}

/** How long the daemon may take to say anything at all: a policy decision or asking the relay (10 s at most). */
const FIRST_WORD_MS = 30_000;
/** How long past a request's own deadline the daemon may take to say so. */
const EXPIRY_GRACE_MS = 10_000;

/**
 * Asks the daemon to gate a call and waits for its answer. The conversation is NDJSON both ways
 * on one plain connection (docs/daemon.md), not HTTP: Node's HTTP client cost every hook process
 * milliseconds to load and run. The call goes first; back come progress lines, then the answer;
 * an offered fallback is answered (or declined) with a line. Resolves only with a well-formed
 * answer; everything else rejects, and every door turns that into a deny: with CallRefusedError
 * when the call is at fault (the daemon refused it, or it cannot be sent), with DaemonBusyError
 * when the daemon takes no more callers now, else with DaemonUnreachableError (the daemon dying, a connection closed mid-answer, garbage, silence
 * past the deadline).
 */
export function gateCall(
  gateRequest: unknown,
  options: DaemonCallOptions & GateConversation = {},
): Promise<GateAnswer> {
  let socketPath: string;
  let payload: string;
  try {
    payload = `${JSON.stringify(gateRequest)}\n`;
  } catch (error) {
    // A BigInt or a cycle in an SDK caller's input, or a nesting deeper than the stack.
    return Promise.reject(
      new CallRefusedError(`the call cannot be written as JSON: ${(error as Error).message}`),
    );
  }
  if (Buffer.byteLength(payload) > MAX_REQUEST_LINE_BYTES)
    return Promise.reject(
      new CallRefusedError(`the call is over ${MAX_REQUEST_LINE_BYTES} bytes, the most the daemon reads`),
    );
  try {
    socketPath = checkedSocketPath(options);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise<GateAnswer>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (
      outcome: { answer: GateAnswer } | { error: string } | { refused: string } | { busy: string },
    ) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', givenUp);
      connection.destroy();
      if ('answer' in outcome) resolve(outcome.answer);
      else if ('refused' in outcome) reject(new CallRefusedError(outcome.refused));
      else if ('busy' in outcome) reject(new DaemonBusyError(outcome.busy));
      else reject(new DaemonUnreachableError(outcome.error));
    };
    // The daemon's own deadlines bound the wait, and the caller's hard deadline bounds them.
    const waitUntil = (moment: number) => {
      clearTimeout(timer);
      const until = Math.min(moment, options.deadline ?? Infinity);
      timer = setTimeout(
        () => finish({ error: 'the daemon gave no answer in time' }),
        Math.max(0, until - Date.now()),
      );
    };
    waitUntil(Date.now() + FIRST_WORD_MS);
    const givenUp = () => finish({ error: 'the caller gave up waiting' });
    options.signal?.addEventListener('abort', givenUp, { once: true });

    const connection = connect(socketPath);
    connection.on('error', (error) => finish({ error: `the daemon cannot be reached: ${error.message}` }));
    readLines(
      connection,
      (line) => {
        if (line.startsWith('HTTP/'))
          return finish({
            error:
              'the daemon speaks an older protocol (it was started before Latch was updated); restart it',
          });
        const message = readGateLine(line);
        if (!message) return finish({ error: 'the daemon answered something that is not an answer' });
        if ('answer' in message) return finish({ answer: message.answer });
        // Not the call's fault: the daemon takes no more callers now.
        if ('refused' in message && message.refused.code === DAEMON_BUSY)
          return finish({ busy: message.refused.message });
        if ('refused' in message)
          return finish({ refused: `the daemon refused the request: ${message.refused.message}` });
        if ('pending' in message) {
          options.onPending?.(message.pending);
          return waitUntil(message.pending.exp + EXPIRY_GRACE_MS);
        }
        waitUntil(message.fallback.exp + EXPIRY_GRACE_MS);
        void (options.onFallback?.(message.fallback) ?? Promise.resolve(undefined)).then(
          (typed) => {
            // Declined (or no terminal): the daemon denies.
            if (!settled) connection.write(`${JSON.stringify({ fallbackAnswer: typed ?? null })}\n`);
          },
          (error: unknown) => finish({ error: `the terminal prompt failed: ${(error as Error).message}` }),
        );
      },
      () => finish({ error: 'the daemon closed the connection without an answer' }),
    );
    connection.write(payload);
    if (options.signal?.aborted) givenUp();
  });
}
