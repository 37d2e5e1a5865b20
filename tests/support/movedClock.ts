import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LatchMachine } from './latchMachine.ts';

const PRELOAD = new URL('./movedClock.cjs', import.meta.url).pathname;

/**
 * Gives every Latch process of `machine` started from now on (daemon, hooks, CLI) one host wall
 * clock that `move` sets ahead or back by `ms`, as a clock set by hand or by NTP would move; the
 * monotonic clock runs on. Restart a running daemon for it to take the preload.
 */
export function movedClock(machine: LatchMachine): { move(ms: number): Promise<void> } {
  const file = join(mkdtempSync(join(tmpdir(), 'latch-clock-')), 'offset');
  writeFileSync(file, '0');
  machine.env['LATCH_TEST_CLOCK'] = file;
  machine.env['NODE_OPTIONS'] = `${machine.env['NODE_OPTIONS'] ?? ''} --require ${PRELOAD}`.trim();
  return {
    async move(ms: number) {
      writeFileSync(file, String(ms));
      // Each process re-reads the offset at most every 20 ms.
      await sleep(100);
    },
  };
}
