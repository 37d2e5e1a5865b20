import { request, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { connect } from 'node:net';
import { socketPath as defaultSocketPath } from '../config/paths.ts';
import { checkSocketPath, InsecurePathError } from './securePath.ts';

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
function checkedSocketPath(options: DaemonCallOptions): string {
  const socketPath = options.socketPath ?? defaultSocketPath();
  try {
    checkSocketPath(socketPath);
  } catch (error) {
    if (error instanceof InsecurePathError && /does not exist$/.test(error.message)) {
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
function requestOverSocket(
  socketPath: string,
  options: RequestOptions,
  onResponse: (response: IncomingMessage) => void,
): ClientRequest {
  return request({ ...options, createConnection: () => connect(socketPath) }, onResponse);
}

/**
 * One call to the daemon's local API over its Unix socket, after walking the socket's path.
 * Throws InsecurePathError or DaemonUnreachableError; callers turn both into a deny.
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
  return new Promise<T>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
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
            reject(new DaemonUnreachableError('the daemon answered something that is not JSON'));
          }
        });
      },
    );
    call.on('error', (error) =>
      reject(new DaemonUnreachableError(`the daemon cannot be reached: ${error.message}`)),
    );
    if (options.timeoutMs) {
      call.setTimeout(options.timeoutMs, () =>
        call.destroy(new Error(`no answer within ${Math.round(options.timeoutMs! / 1000)} s`)),
      );
    }
    call.end(payload);
  });
}

/** Follows the daemon's switch: calls `onState` with each change, until the returned stop(). */
export function watchDaemon(
  onState: (state: { frozen: boolean; reason: string | null }) => void,
  options: DaemonCallOptions = {},
): () => void {
  const socketPath = checkedSocketPath(options);
  const call = requestOverSocket(socketPath, { method: 'GET', path: '/v1/watch' }, (response) => {
    let buffer = '';
    response.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line) onState(JSON.parse(line) as { frozen: boolean; reason: string | null });
      }
    });
  });
  call.on('error', () => {});
  call.end();
  return () => call.destroy();
}

/**
 * Asks the daemon to gate a call and waits for the answer. `onPending` hears the request id and
 * deadline once a phone is asked. The daemon answers in NDJSON: progress lines, then the answer.
 */
export function gateCall<A>(
  gateRequest: unknown,
  options: DaemonCallOptions & { onPending?: (pending: { requestId: string; exp: number }) => void } = {},
): Promise<A> {
  let socketPath: string;
  try {
    socketPath = checkedSocketPath(options);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise<A>((resolve, reject) => {
    const payload = JSON.stringify(gateRequest);
    const call = requestOverSocket(
      socketPath,
      {
        method: 'POST',
        path: '/v1/gate',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        let buffer = '';
        let answered = false;
        response.on('data', (chunk: Buffer) => {
          buffer += chunk.toString('utf8');
          let newline;
          while ((newline = buffer.indexOf('\n')) >= 0) {
            const line = JSON.parse(buffer.slice(0, newline)) as {
              pending?: { requestId: string; exp: number };
              answer?: A;
              error?: { message: string };
            };
            buffer = buffer.slice(newline + 1);
            if (line.pending) options.onPending?.(line.pending);
            if (line.answer) {
              answered = true;
              resolve(line.answer);
            }
            if (line.error) {
              answered = true;
              reject(new DaemonUnreachableError(`the daemon refused the request: ${line.error.message}`));
            }
          }
        });
        response.on('end', () => {
          if (answered) return;
          try {
            const body = JSON.parse(buffer) as { error?: { message: string } };
            reject(
              new DaemonUnreachableError(
                `the daemon refused the request: ${body.error?.message ?? 'no answer'}`,
              ),
            );
          } catch {
            reject(new DaemonUnreachableError('the daemon closed the connection without an answer'));
          }
        });
      },
    );
    call.on('error', (error) =>
      reject(new DaemonUnreachableError(`the daemon cannot be reached: ${error.message}`)),
    );
    if (options.timeoutMs)
      call.setTimeout(options.timeoutMs, () => call.destroy(new Error('no answer in time')));
    call.end(payload);
  });
}
