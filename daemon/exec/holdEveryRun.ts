import { existsSync } from 'node:fs';
import type { SwitchRules } from '../socket/watchDaemon.ts';
import { daemonOfRuns } from './findRunProcesses.ts';
import { procTree } from './procTree.ts';
import { GRACE_MS, HOLD_AGAIN_MS } from './runUnderSwitch.ts';

export interface EveryRun {
  /** The fleet's switch as it is now: a freeze holds (or ends) every run, a resume continues them. */
  follow(frozen: boolean, onFreeze: SwitchRules['onFreeze']): void;
  /** Stops holding again; what is held stays held (the daemon is going, the freeze is not). */
  stop(): void;
}

/**
 * Every run of `latch exec` made for this daemon (by its socket), held by the daemon itself while
 * the fleet is frozen, beside each latch exec's own hold: a command that kills or stops its latch
 * exec (`kill -9 $PPID`, `kill -STOP $PPID`) would otherwise run on, out of the switch's reach.
 * Found by the runs' marker in /proc; where there is none (macOS), each latch exec alone holds its
 * run. With `on_freeze = "terminate"`, what is left once a live latch exec has ended its run
 * (SIGTERM, then SIGKILL after the grace) is killed: a second SIGTERM reads as "force quit" to
 * many tools.
 */
export function holdEveryRun(socket: string): EveryRun {
  if (!existsSync('/proc/self/stat')) return { follow() {}, stop() {} };
  const runs = procTree(undefined, { daemon: daemonOfRuns(socket) });
  let frozenNow = false;
  let holdingAgain: NodeJS.Timeout | undefined;
  let ending: NodeJS.Timeout | undefined;
  const stop = () => {
    clearInterval(holdingAgain);
    clearTimeout(ending);
  };
  return {
    follow(frozen, onFreeze) {
      if (frozen === frozenNow) return;
      frozenNow = frozen;
      stop();
      if (!frozen) return runs.release();
      if (onFreeze === 'terminate') {
        ending = setTimeout(() => runs.signal('SIGKILL'), GRACE_MS + HOLD_AGAIN_MS);
        return;
      }
      runs.hold();
      holdingAgain = setInterval(() => runs.hold(), HOLD_AGAIN_MS);
    },
    stop,
  };
}
