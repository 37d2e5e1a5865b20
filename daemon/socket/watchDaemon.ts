import type { ClientRequest } from 'node:http';
import type { LatchConfig } from '../config/config.ts';
import { requestOverSocket } from './daemonClient.ts';
import { checkedSocketPath, type DaemonCallOptions } from './daemonSocket.ts';
import { jsonObjectLine } from './jsonObjectLine.ts';
import { busyMessage } from './localApi.ts';
import { readLines } from './readLines.ts';

/** How a command run under the switch obeys it: the kill-switch settings in force at the daemon. */
export type SwitchRules = Pick<LatchConfig['killSwitch'], 'strict' | 'graceSeconds' | 'onFreeze'>;

/** The switch as `GET /v1/watch` tells it, with the rules in force when it was told. */
export interface SwitchView {
  frozen: boolean;
  reason: string | null;
  rules: SwitchRules;
}

export interface DaemonWatcher {
  /** The daemon's switch: its current state first on every (re)connection, then each change. */
  onState(state: SwitchView): void;
  /**
   * The watch broke, or could not be set up; it keeps trying. Once per outage, and once more if
   * the daemon turns out to be running but too busy to watch for this run (`busy`).
   */
  onLost(reason: string, busy: boolean): void;
  /** The daemon answers again after onLost; its current state follows at once. */
  onBack(): void;
}

// Capped backoff: a daemon restarted by systemd (RestartSec=2) is found again within 2 s of
// answering, and a daemon that stays away costs one connection attempt every 2 s.
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2000;
/** A switch line is tens of bytes; a daemon that sends more without a newline is not one. */
const MAX_LINE_BYTES = 4096;
/** A daemon that refuses the watch says why at once; a refusal that never ends is no answer. */
const REFUSAL_BODY_MS = 1000;

/**
 * Follows the daemon's kill switch for as long as the caller needs it: reconnects whenever the
 * stream ends, breaks or carries anything but switch lines, until the returned stop(). Because
 * each connection starts with the current state, what changed while it was away is never missed.
 */
export function watchDaemon(watcher: DaemonWatcher, options: DaemonCallOptions = {}): () => void {
  let stopped = false;
  let lost = false;
  let lostBusy = false;
  let delay = FIRST_RETRY_MS;
  let call: ClientRequest | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = () => {
    let over = false;
    const broke = (reason: string, busy = false) => {
      if (over || stopped) return;
      over = true;
      call?.destroy();
      // Told again once the daemon is found busy: it runs, and a freeze would not reach the run.
      if (!lost || (busy && !lostBusy)) {
        lost = true;
        lostBusy = busy;
        watcher.onLost(reason, busy);
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
      if (response.statusCode !== 200) {
        // A busy daemon says so in its body: running, but it will not tell this run of a freeze.
        const refused = `the daemon answered ${response.statusCode} to /v1/watch`;
        const deadline = setTimeout(() => broke(`${refused}, and did not say why in time`), REFUSAL_BODY_MS);
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_LINE_BYTES) return broke(`${refused}, with more than a line`);
          chunks.push(chunk);
        });
        response.on('error', () => {});
        response.on('end', () => {
          const busy = busyMessage(jsonObjectLine(Buffer.concat(chunks).toString('utf8')));
          broke(busy ?? refused, busy !== undefined);
        });
        response.on('close', () => clearTimeout(deadline));
        return;
      }
      let first = true;
      readLines(
        response,
        (line) => {
          if (over) return;
          const state = readSwitchView(line);
          if (!state) return broke('the daemon sent something that is not its switch');
          if (first) {
            first = false;
            delay = FIRST_RETRY_MS;
            if (lost) {
              lost = false;
              lostBusy = false;
              watcher.onBack();
            }
          }
          watcher.onState(state);
        },
        () => broke('the daemon closed the watch'),
        MAX_LINE_BYTES,
      );
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
  const value = jsonObjectLine(line);
  if (!value) return undefined;
  const { frozen, reason, rules } = value;
  if (typeof frozen !== 'boolean' || (reason !== null && typeof reason !== 'string')) return undefined;
  if (typeof rules !== 'object' || rules === null) return undefined;
  const { strict, graceSeconds, onFreeze } = rules as Record<string, unknown>;
  if (
    typeof strict !== 'boolean' ||
    !Number.isSafeInteger(graceSeconds) ||
    (graceSeconds as number) < 0 ||
    (onFreeze !== 'stop' && onFreeze !== 'terminate')
  )
    return undefined;
  return { frozen, reason, rules: { strict, graceSeconds: graceSeconds as number, onFreeze } };
}
