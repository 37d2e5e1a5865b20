import type { ClientRequest } from 'node:http';
import { checkedSocketPath, requestOverSocket, type DaemonCallOptions } from './daemonClient.ts';

/** The switch as `GET /v1/watch` tells it. */
export interface SwitchView {
  frozen: boolean;
  reason: string | null;
}

export interface DaemonWatcher {
  /** The daemon's switch: its current state first on every (re)connection, then each change. */
  onState(state: SwitchView): void;
  /** The watch broke, or could not be set up; it keeps trying. Once per outage. */
  onLost(reason: string): void;
  /** The daemon answers again after onLost; its current state follows at once. */
  onBack(): void;
}

// Capped backoff: a daemon restarted by systemd (RestartSec=2) is found again within 2 s of
// answering, and a daemon that stays away costs one connection attempt every 2 s.
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2000;
/** A switch line is tens of bytes; a daemon that sends more without a newline is not one. */
const MAX_LINE_BYTES = 4096;

/**
 * Follows the daemon's kill switch for as long as the caller needs it: reconnects whenever the
 * stream ends, breaks or carries anything but switch lines, until the returned stop(). Because
 * each connection starts with the current state, what changed while it was away is never missed.
 */
export function watchDaemon(watcher: DaemonWatcher, options: DaemonCallOptions = {}): () => void {
  let stopped = false;
  let lost = false;
  let delay = FIRST_RETRY_MS;
  let call: ClientRequest | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = () => {
    let over = false;
    const broke = (reason: string) => {
      if (over || stopped) return;
      over = true;
      call?.destroy();
      if (!lost) {
        lost = true;
        watcher.onLost(reason);
      }
      retry = setTimeout(connect, delay);
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    };
    let socketPath: string;
    try {
      socketPath = checkedSocketPath(options);
    } catch (error) {
      // An insecure path counts as no daemon: a stranger's socket must not resume anything.
      return broke((error as Error).message);
    }
    call = requestOverSocket(socketPath, { method: 'GET', path: '/v1/watch' }, (response) => {
      if (response.statusCode !== 200)
        return broke(`the daemon answered ${response.statusCode} to /v1/watch`);
      let buffer = '';
      let first = true;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        for (let newline = buffer.indexOf('\n'); newline >= 0 && !over; newline = buffer.indexOf('\n')) {
          const state = readSwitchView(buffer.slice(0, newline));
          buffer = buffer.slice(newline + 1);
          if (!state) return broke('the daemon sent something that is not its switch');
          if (first) {
            first = false;
            delay = FIRST_RETRY_MS;
            if (lost) {
              lost = false;
              watcher.onBack();
            }
          }
          watcher.onState(state);
        }
        if (buffer.length > MAX_LINE_BYTES) broke('the daemon sent something that is not its switch');
      });
      response.on('end', () => broke('the daemon closed the watch'));
      response.on('error', () => broke('the connection to the daemon broke'));
    });
    call.on('error', (error) => broke(`the daemon cannot be reached: ${error.message}`));
    call.on('close', () => broke('the connection to the daemon closed'));
    call.end();
  };

  connect();
  return () => {
    stopped = true;
    clearTimeout(retry);
    call?.destroy();
  };
}

function readSwitchView(line: string): SwitchView | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { frozen, reason } = value as Record<string, unknown>;
  if (typeof frozen !== 'boolean' || (reason !== null && typeof reason !== 'string')) return undefined;
  return { frozen, reason };
}
