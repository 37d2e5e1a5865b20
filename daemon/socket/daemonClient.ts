import { request, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { connect } from 'node:net';
import {
  checkedSocketPath,
  DaemonBusyError,
  DaemonUnreachableError,
  type DaemonCallOptions,
} from './daemonSocket.ts';
import { busyMessage } from './localApi.ts';

/**
 * An HTTP request over the daemon's socket, without an Agent: a Unix socket needs none of its
 * bookkeeping, whose first use (it compiles an IPv6 regex) costs a short-lived CLI process several ms.
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
 * Rejects with InsecurePathError, DaemonBusyError (an HTTP 503 `daemon_busy`) or
 * DaemonUnreachableError (no answer, a cut answer, not JSON, no answer in time); callers turn
 * each into a deny. `timeoutMs` is one deadline for the whole call, its answer's head and body:
 * a peer that trickles its answer a byte at a time does not hold the caller past it.
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
    const fail = (message: string, Fault = DaemonUnreachableError) => {
      clearTimeout(deadline);
      call.destroy();
      reject(new Fault(message));
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
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return fail('the daemon answered something that is not JSON');
          }
          const busy = response.statusCode === 503 ? busyMessage(body) : undefined;
          if (busy) return fail(busy, DaemonBusyError);
          clearTimeout(deadline);
          resolve(body as T);
        });
        response.on('aborted', () => fail('the daemon closed the connection mid-answer'));
        response.on('error', () => fail('the daemon closed the connection mid-answer'));
      },
    );
    call.on('error', (error) => fail(`the daemon cannot be reached: ${error.message}`));
    // Not the socket's idle timeout, which every byte would start again.
    const deadline = setTimeout(() => fail(`no answer within ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
    call.end(payload);
  });
}
