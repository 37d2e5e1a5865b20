import type { LatchConfig } from '../config/config.ts';
import type { ConnectionStatus } from '../relay/relayConnection.ts';
import type { KillSwitch } from './killSwitch.ts';

/** How often strict mode looks at how long the relay has been out of reach. */
const CHECK_EVERY_MS = 1000;
/** The keep-alive's bounds: the runtime answers each ping without waking the fleet object. */
const PING_EVERY_MS = { least: 250, most: 25_000 };

/**
 * How often the daemon pings the relay. A connection that answers nothing between two pings is
 * dropped: a silent partition sends no reset, and a socket left open would count as connected
 * for as long as TCP retransmits (about 15 minutes on Linux), past any grace period. A quarter
 * of the grace period notices it within half of it; 25 s at the default 120 s.
 */
export function pingEveryMs({ graceSeconds }: LatchConfig['killSwitch']): number {
  return Math.max(PING_EVERY_MS.least, Math.min(PING_EVERY_MS.most, graceSeconds * 250));
}

/**
 * Follows the relay connection's status, for `latch status` and for strict mode: with
 * `[kill_switch] strict`, a relay out of reach longer than the grace period freezes this host.
 * `settings` is asked at each check: a change to the config in force applies at once.
 */
export class RelayReachability {
  #status: ConnectionStatus = 'connecting';
  #unreachableSince: number | undefined = Date.now();
  readonly #check: NodeJS.Timeout;

  constructor(killSwitch: KillSwitch, settings: () => LatchConfig['killSwitch']) {
    this.#check = setInterval(() => {
      const { strict, graceSeconds } = settings();
      if (!strict || this.#unreachableSince === undefined || killSwitch.state.frozen) return;
      if (Date.now() - this.#unreachableSince >= graceSeconds * 1000)
        killSwitch.freezeUnreachable(
          'the relay has been unreachable longer than the grace period (strict mode)',
        );
    }, CHECK_EVERY_MS);
  }

  get status(): ConnectionStatus {
    return this.#status;
  }

  update(status: ConnectionStatus): void {
    this.#status = status;
    if (status === 'connected') this.#unreachableSince = undefined;
    else this.#unreachableSince ??= Date.now();
  }

  stop(): void {
    clearInterval(this.#check);
  }
}
