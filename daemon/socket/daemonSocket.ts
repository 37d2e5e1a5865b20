import { socketPath as defaultSocketPath } from '../config/paths.ts';
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
