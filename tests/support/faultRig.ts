import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { RequestList } from '../../shared/messages/relayViews.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import {
  auditLines,
  initMachine,
  newMachine,
  runLatch,
  startDaemon,
  withStore,
  type LatchMachine,
  type RunningDaemon,
} from './latchMachine.ts';
import { PartitionProxy } from './partitionProxy.ts';
import { RelayDriver } from './relayDriver.ts';
import { pairSoftwarePhone } from './softwarePairing.ts';

/**
 * Faults over the network and processes, every part real: the relay (`wrangler dev`, its state
 * persisted), a daemon that reaches it only through a PartitionProxy, and a software phone paired
 * by `latch pair`, which reaches the relay beside the proxy (a partition cuts the host off, not
 * the phone).
 */
export interface FaultRig {
  /** The relay running now (`killRelay` and `startRelayAgain` replace it). */
  readonly relay: RelayProcess;
  proxy: PartitionProxy;
  /** The phone's way to the relay. */
  driver: RelayDriver;
  machine: LatchMachine;
  /** The daemon running now (`startDaemonAgain` replaces it). */
  readonly daemon: RunningDaemon;
  phone: TestPhone;
  fleet: string;
  /** The ids of the requests the relay holds as pending, as the phone lists them. */
  pendingAtRelay(): Promise<string[]>;
  /** What `latch status --json` says. */
  status(): Promise<{ state: string; relay: string }>;
  /** The daemon's own record of a request (state.db): pending, approved, denied, expired, withdrawn. */
  recordOf(requestId: string): string | undefined;
  /** The audit lines of one event, for one request when `requestId` is given. */
  audited(event: string, requestId?: string): Record<string, unknown>[];
  /** The phone's panic button: a freeze signed with its device key, sent to the relay. */
  freezeFromPhone(reason: string): Promise<void>;
  /** SIGKILL to wrangler and its workerd at once: the relay dies mid-flight, its storage stays. */
  killRelay(): Promise<void>;
  /** The relay again, on the same port and the same persisted state. */
  startRelayAgain(): Promise<void>;
  startDaemonAgain(): Promise<void>;
  stop(): Promise<void>;
}

export async function startFaultRig(setUp: {
  name: string;
  policy: string;
  config?: (text: string) => string;
}): Promise<FaultRig> {
  const state = mkdtempSync(join(tmpdir(), `latch-${setUp.name}-`));
  const envFile = join(state, 'relay.env');
  ensureRelayEnvFile(envFile);
  const machine = newMachine();
  let relay: RelayProcess | undefined;
  let proxy: PartitionProxy | undefined;
  let daemon: RunningDaemon | undefined;
  // Last started first, each whatever the others do: nothing is left running behind a failure.
  const stop = async () => {
    await daemon?.stop().catch(() => undefined);
    await proxy?.stop().catch(() => undefined);
    await relay?.stop().catch(() => undefined);
    rmSync(state, { recursive: true, force: true });
    rmSync(dirname(machine.home), { recursive: true, force: true });
  };
  try {
    relay = await startRelay({ persistTo: state, envFile });
    proxy = await PartitionProxy.start(relay.port);
    const driver = new RelayDriver(proxy.origin, proxy.phoneFetch);
    await initMachine(machine, {
      relay: proxy.origin,
      policy: setUp.policy,
      ...(setUp.config ? { config: setUp.config } : {}),
    });
    const { phone, fleet } = await pairSoftwarePhone(machine, driver);
    daemon = await startDaemon(machine);
    const partition = proxy;
    return {
      get relay() {
        return relay!;
      },
      proxy: partition,
      driver,
      machine,
      get daemon() {
        return daemon!;
      },
      phone,
      fleet,
      pendingAtRelay: async () =>
        (
          await driver.phoneCall<RequestList>(phone, 'GET', `/v1/fleets/${fleet}/requests?state=pending`)
        ).body.requests.map((request) => request.requestId),
      status: async () => JSON.parse((await runLatch(machine, ['status', '--json'])).stdout),
      recordOf: (requestId) => withStore(machine, (store) => store.request(requestId)?.state),
      audited: (event, requestId) =>
        auditLines(machine).filter(
          (line) => line['event'] === event && (requestId === undefined || line['requestId'] === requestId),
        ),
      freezeFromPhone: async (reason) => {
        const envelope = await signEnvelope(
          'freeze',
          { fleet, reason },
          { role: 'device', id: phone.id },
          phone.deviceKeys.privateKey,
        );
        const frozen = await driver.call('POST', `/v1/fleets/${fleet}/freeze`, { json: envelope });
        if (frozen.status !== 200) throw new Error(`the relay refused the freeze: ${JSON.stringify(frozen)}`);
      },
      killRelay: async () => {
        process.kill(-relay!.group.child.pid!, 'SIGKILL');
        await relay!.stop(); // reaps what the SIGKILL left
      },
      startRelayAgain: async () => {
        relay = await startRelay({ persistTo: state, envFile, port: relay!.port });
      },
      startDaemonAgain: async () => {
        daemon = await startDaemon(machine);
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
