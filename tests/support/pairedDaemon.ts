import { expect } from 'vitest';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import {
  initMachine,
  newMachine,
  pairPhoneDirectly,
  startDaemon,
  withStore,
  type LatchMachine,
  type RunningDaemon,
} from './latchMachine.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { StandInRelay } from './standInRelay.ts';

/** A running daemon, paired with software phones through the stand-in relay and connected to it. */
export interface PairedDaemon {
  relay: StandInRelay;
  machine: LatchMachine;
  daemon: RunningDaemon;
  phones: [TestPhone, ...TestPhone[]];
  stop(): Promise<void>;
}

/** The set-up most daemon tests share: `latch init`, `phones` phones paired, the daemon started. */
export async function startPairedDaemon(
  options: {
    policy?: string;
    quorum?: number;
    config?: (text: string) => string;
    phones?: number;
    pushFatigue?: boolean;
  } = {},
): Promise<PairedDaemon> {
  const relay = await StandInRelay.start();
  const machine = newMachine();
  await initMachine(machine, { relay: relay.origin, ...options });
  const first = (await pairPhoneDirectly(machine, relay.origin)).phone;
  const phones: [TestPhone, ...TestPhone[]] = [first];
  for (let n = 2; n <= (options.phones ?? 1); n++) {
    phones.push((await pairPhoneDirectly(machine, relay.origin, { name: `Phone ${n}` })).phone);
  }
  const daemon = await startDaemon(machine);
  await relay.waitFor(() => relay.connected > 0);
  return {
    relay,
    machine,
    daemon,
    phones,
    stop: async () => {
      await daemon.stop();
      await relay.stop();
    },
  };
}

/**
 * Resolves once the daemon has handled every frame the relay sent so far: frames are handled in
 * order, so a last one that changes nothing (an expiry of no request) moves the cursor past them.
 * A test that asserts something did not happen waits on this, never on a sleep.
 */
export async function framesHandled(machine: LatchMachine, relay: StandInRelay): Promise<void> {
  const seq = relay.send({
    v: PROTOCOL_VERSION,
    type: 'expired',
    requestId: 'no-such-request',
    at: Date.now(),
  });
  await expect
    .poll(() => withStore(machine, (store) => Number(store.meta('cursor') ?? 0)))
    .toBeGreaterThanOrEqual(seq);
}

/** Restarts the daemon and waits until it is connected to the relay again. */
export async function restartDaemon(daemon: RunningDaemon, machine: LatchMachine, relay: StandInRelay) {
  const seen = relay.cursors.length;
  await daemon.stop();
  const restarted = await startDaemon(machine);
  await relay.waitFor(() => relay.cursors.length > seen && relay.connected > 0);
  return restarted;
}
