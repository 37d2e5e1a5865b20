import { request, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { connect } from 'node:net';
import { socketPath as defaultSocketPath } from '../config/paths.ts';
import { readGateLine, type FallbackOffer, type GateAnswer } from './localApi.ts';
import { readLines } from './readLines.ts';
import { checkSocketPath, NoSocketError } from './securePath.ts';

export class DaemonUnreachableError extends Error {
  readonly code = 'daemon_unreachable';
}

export interface DaemonCallOptions {
  socketPath?: string;
  /** How long to wait for the answer; a gate call waits as long as a phone may take. */
  timeoutMs?: number;
}

/**
 * The socket's path, once its walk from / passed. A missing socket means no daemon is running;
 * anything else wrong with the path is an InsecurePathError.
 */
export function checkedSocketPath(options: DaemonCallOptions): string {
  const socketPath = options.socketPath ?? defaultSocketPath();
  try {
    checkSocketPath(socketPath);
  } catch (error) {
    if (error instanceof NoSocketError) {
      throw new DaemonUnreachableError(
        `the daemon is not running (no socket at ${socketPath}); start it with latch daemon`,
      );
    }
    throw error;
  }
  return socketPath;
}

/**
 * An HTTP request over the daemon's socket, without an Agent: a Unix socket needs none of its
 * bookkeeping, whose first use (it compiles an IPv6 regex) cost each hook process several ms.
 */
export function requestOverSocket(
  socketPath: string,
  options: RequestOptions,
  onResponse: (response: IncomingMessage) => void,
): ClientRequest {
  return request({ ...options, createConnection: () => connect(socketPath) }, onResponse);
}

/** How long a plain call (status, panic) may take by default: the daemon answers these at once. */
const PLAIN_CALL_TIMEOUT_MS = 10_000;

/**
 * One call to the daemon's local API over its Unix socket, after walking the socket's path.
 * Rejects with InsecurePathError or DaemonUnreachableError (no answer, a cut answer, not JSON,
 * no answer in time); callers turn both into a deny.
 */
export function callDaemon<T>(
  method: string,
  path: string,
  body?: unknown,
  options: DaemonCallOptions = {},
): Promise<T> {
  let socketPath: string;
  try {
    socketPath = checkedSocketPath(options);
  } catch (error) {
    return Promise.reject(error);
  }
  const timeoutMs = options.timeoutMs ?? PLAIN_CALL_TIMEOUT_MS;
  return new Promise<T>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const fail = (message: string) => {
      call.destroy();
      reject(new DaemonUnreachableError(message));
    };
    const call = requestOverSocket(
      socketPath,
      {
        method,
        path,
        headers: payload
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
          : {},
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T);
          } catch {
            fail('the daemon answered something that is not JSON');
          }
        });
        response.on('aborted', () => fail('the daemon closed the connection mid-answer'));
        response.on('error', () => fail('the daemon closed the connection mid-answer'));
      },
    );
    call.on('error', (error) => fail(`the daemon cannot be reached: ${error.message}`));
    call.setTimeout(timeoutMs, () => fail(`no answer within ${Math.round(timeoutMs / 1000)} s`));
    call.end(payload);
  });
}

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
}

/** How long the daemon may take to say anything at all: a policy decision or asking the relay (10 s at most). */
const FIRST_WORD_MS = 30_000;
/** How long past a request's own deadline the daemon may take to say so. */
const EXPIRY_GRACE_MS = 10_000;

/**
 * Asks the daemon to gate a call and waits for its answer. The conversation is NDJSON both ways
 * on one connection: the request, then (if offered a fallback) the typed answer; back come
 * progress lines, then the answer. Resolves only with a well-formed answer; everything else —
 * the daemon dying, a connection closed mid-answer, garbage, silence past the deadline — rejects
 * with DaemonUnreachableError, which every door turns into a deny.
 */
export function gateCall(
  gateRequest: unknown,
  options: DaemonCallOptions & GateConversation = {},
): Promise<GateAnswer> {
  let socketPath: string;
  let payload: string;
  try {
    socketPath = checkedSocketPath(options);
    payload = `${JSON.stringify(gateRequest)}\n`;
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise<GateAnswer>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: { answer: GateAnswer } | { error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      call.destroy();
      if ('answer' in outcome) resolve(outcome.answer);
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

    const call = requestOverSocket(
      socketPath,
      {
        method: 'POST',
        path: '/v1/gate',
        headers: { 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' },
      },
      (response) => {
        if (response.statusCode !== 200) {
          readRefusal(response).then((message) =>
            finish({ error: `the daemon refused the request: ${message}` }),
          );
          return;
        }
        readLines(
          response,
          (line) => {
            const message = readGateLine(line);
            if (!message) return finish({ error: 'the daemon answered something that is not an answer' });
            if ('answer' in message) return finish({ answer: message.answer });
            if ('pending' in message) {
              options.onPending?.(message.pending);
              return waitUntil(message.pending.exp + EXPIRY_GRACE_MS);
            }
            waitUntil(message.fallback.exp + EXPIRY_GRACE_MS);
            void (options.onFallback?.(message.fallback) ?? Promise.resolve(undefined)).then(
              (typed) => {
                if (settled) return;
                // No answer (or no terminal): the daemon hears the end of the request and denies.
                if (typed === undefined) call.end();
                else call.write(`${JSON.stringify({ fallbackAnswer: typed })}\n`);
              },
              (error: unknown) =>
                finish({ error: `the terminal prompt failed: ${(error as Error).message}` }),
            );
          },
          () => finish({ error: 'the daemon closed the connection without an answer' }),
        );
      },
    );
    call.on('error', (error) => finish({ error: `the daemon cannot be reached: ${error.message}` }));
    call.on('close', () => finish({ error: 'the daemon closed the connection without an answer' }));
    call.write(payload);
  });
}

function readRefusal(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk.slice(0, 4096)));
    const done = () => {
      try {
        resolve(String((JSON.parse(text) as { error: { message: unknown } }).error.message));
      } catch {
        resolve(`status ${response.statusCode}`);
      }
    };
    response.on('end', done);
    response.on('error', done);
    response.on('aborted', done);
  });
}
