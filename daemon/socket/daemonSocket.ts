import { socketPath as defaultSocketPath } from '../config/paths.ts';
import { checkSocketPath, NoSocketError, SocketPathTooLongError } from './securePath.ts';

export class DaemonUnreachableError extends Error {
  readonly code = 'daemon_unreachable';
}

/** The daemon runs but holds all the connections it takes (`daemon_busy`): a deny all the same. */
export class DaemonBusyError extends DaemonUnreachableError {}

/**
 * The call itself is at fault, not the daemon: the daemon refused it as sent, or it could not be
 * sent (not JSON, over the daemon's cap). Asking again cannot help; restarting the daemon neither.
 */
export class CallRefusedError extends Error {
  readonly code = 'invalid_request';
}

export interface DaemonCallOptions {
  socketPath?: string;
  /** How long to wait for the answer; a gate call waits as long as a phone may take. */
  timeoutMs?: number;
}

/**
 * The socket's path, once its walk from / passed. A missing socket means no daemon is running, as
 * does a path too long for a socket; anything else wrong with the path is an InsecurePathError.
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
    // No daemon can listen there: said as it is, not as a socket missing.
    if (error instanceof SocketPathTooLongError) throw new DaemonUnreachableError(error.message);
    throw error;
  }
  return socketPath;
}
