import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadHostIdentity } from '../daemon/identity/hostIdentity.ts';
import { ensureRelayEnvFile } from '../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../scripts/lib/relayProcess.ts';
import {
  initMachine,
  newMachine,
  startDaemon,
  type LatchMachine,
  type RunningDaemon,
} from '../tests/support/latchMachine.ts';
import type { TestPhone } from '../scripts/lib/softwarePhone.ts';
import { startPushService } from '../tests/support/pushService.ts';
import { PushServiceClient } from '../tests/support/pushServiceClient.ts';
import { RelayDriver } from '../tests/support/relayDriver.ts';
import { pairSoftwarePhone } from '../tests/support/softwarePairing.ts';

export const BENCH_POLICY = `
default = "ask"
[[rule]]
name = "reads"
tool = "Read"
action = "allow"
[[rule]]
name = "bench"
tool = "bench"
action = "ask"
risk = "low"
`;

/**
 * Everything real, as `npm start` runs it: the relay in workerd (push caps raised, so a
 * benchmark can push hundreds of times), the push-service stand-in, a daemon, and a phone in
 * software paired through `latch pair`.
 */
export interface BenchEnvironment {
  origin: string;
  relay: RelayProcess;
  driver: RelayDriver;
  push: PushServiceClient;
  pushId: string;
  machine: LatchMachine;
  daemon: RunningDaemon;
  phone: TestPhone;
  fleet: string;
  hostId: string;
  hostToken: string;
  state: string;
  stop(): Promise<void>;
}

export async function benchEnvironment(): Promise<BenchEnvironment> {
  const state = mkdtempSync(join(tmpdir(), 'latch-bench-'));
  const envFile = join(state, 'relay.env');
  ensureRelayEnvFile(envFile);
  // The billable-event meter (docs/relay.md) is on for the cost benchmark to read.
  appendFileSync(envFile, 'PUSH_CAPS=1000000,1000000,1000000\nBILLABLE_METER=on\n');
  const relay = await startRelay({ persistTo: join(state, 'relay'), envFile });
  const origin = `http://localhost:${relay.port}`;
  const pushServer = await startPushService();
  const push = new PushServiceClient(pushServer.url);
  const machine = newMachine();
  await initMachine(machine, { relay: origin, quorum: 1, policy: BENCH_POLICY });
  const daemon = await startDaemon(machine);
  const driver = new RelayDriver(origin, (url, init) => fetch(url, init));
  const subscription = await push.subscribe();
  const { phone, fleet } = await pairSoftwarePhone(machine, driver, { push: subscription.subscription });
  const hostToken = readFileSync(machine.files.hostToken, 'utf8').trim();
  const { id: hostId } = await loadHostIdentity(machine.files.hostKey);
  return {
    origin,
    relay,
    driver,
    push,
    pushId: subscription.id,
    machine,
    daemon,
    phone,
    fleet,
    hostId,
    hostToken,
    state,
    stop: async () => {
      await daemon.stop();
      await pushServer.close();
      await relay.stop();
      rmSync(state, { recursive: true, force: true });
    },
  };
}
