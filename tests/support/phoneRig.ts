import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';
import { approvePending, pairBrowserPhone, type PairedBrowserPhone } from './browserFlows.ts';
import { HostileProxy } from './hostileProxy.ts';
import {
  initMachine,
  newMachine,
  startDaemon,
  type LatchMachine,
  type RunningDaemon,
} from './latchMachine.ts';
import { startPushService } from './pushService.ts';
import { PushServiceClient } from './pushServiceClient.ts';
import { startRelayServingAppCopy } from './relayServingAppCopy.ts';

/** A policy that asks a phone about every Bash call, at low risk (so with no cooling-off). */
export const ASK_EVERY_BASH_CALL = `
default = "ask"
[[rule]]
name = "shell"
tool = "Bash"
action = "ask"
risk = "low"
`;

/** A policy rule that asks about every `latch request` at low risk: no cooling-off before Approve. */
export const ASK_EVERY_REQUEST = `[[rule]]
name = "requests"
tool = "request"
action = "ask"
risk = "low"
`;

/** How a host is set up: `initMachine`'s options, the relay aside (the rig's). */
export type HostSetUp = Omit<Parameters<typeof initMachine>[1], 'relay'>;

export interface PhoneRigOptions extends Omit<HostSetUp, 'name'> {
  /** Names the temporary folder the relay keeps its state in. */
  name: string;
  /** The first host's name (test-box by default). */
  hostName?: string;
  /**
   * 'app-copy': the relay serves its own copy of the built app, which a test may replace
   * (startRelayServingAppCopy); 'plain': the relay as `npm start` runs it.
   */
  relay: 'app-copy' | 'plain';
  /** Everyone, daemons and phones, reaches the relay through a HostileProxy that can lie to both. */
  hostileProxy?: boolean;
  /** Phones paired in this order before the tests start; each after the first is approved by the first. */
  phones?: string[];
}

export interface PhoneRig {
  /** The relay's own folder: its persisted storage, its env file, its copy of the app. */
  state: string;
  /** The app the relay serves, with 'app-copy'. */
  app: string | undefined;
  /** The relay running now (restartRelay starts another). */
  readonly relay: RelayProcess;
  proxy: HostileProxy | undefined;
  /** Where daemons and phones reach the relay (through the proxy, with one). */
  origin: string;
  push: Awaited<ReturnType<typeof startPushService>>;
  pushService: PushServiceClient;
  /** The first host, set up with the rig's options. */
  machine: LatchMachine;
  /** Its daemon running now (restartDaemon starts another). */
  readonly daemon: RunningDaemon;
  /** The phones paired through the rig, in pairing order. */
  phones: PairedBrowserPhone[];
  /** A further host on the same relay, stopped and removed with the rig. */
  addHost(setUp: HostSetUp): Promise<{ machine: LatchMachine; daemon: RunningDaemon }>;
  /**
   * pairBrowserPhone with the first host (or `machine`); a new phone is added once the first
   * phone approves it, unless `approve` says otherwise. The rig closes it when it stops.
   */
  pairPhone(
    name: string,
    options?: Parameters<typeof pairBrowserPhone>[4] & { machine?: LatchMachine },
  ): Promise<PairedBrowserPhone>;
  /** Stops the relay, runs `whileDown`, and starts it again on the same port with the same storage. */
  restartRelay(whileDown?: () => Promise<void>): Promise<void>;
  /** Stops the first host's daemon and starts it again. */
  restartDaemon(): Promise<void>;
  /** Stops everything the rig started, last started first, even when one of them fails to stop. */
  stop(): Promise<void>;
}

/**
 * The set-up of a browser test: a real relay, the push-service stand-in, a Latch host running
 * its daemon, and paired Chromium phones. A start that fails stops what it had started: a relay
 * or a Chromium left running would outlive the test run.
 */
export async function startPhoneRig(options: PhoneRigOptions): Promise<PhoneRig> {
  const { name, hostName, relay: relayKind, hostileProxy, phones: phoneNames = [], ...hostSetUp } = options;
  const state = mkdtempSync(join(tmpdir(), `latch-${name}-`));
  const stops: (() => Promise<void>)[] = [async () => rmSync(state, { recursive: true, force: true })];
  const stop = async () => {
    const failures: unknown[] = [];
    for (const step of stops.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, 'the phone rig did not stop cleanly');
  };

  try {
    const envFile = join(state, 'relay.env');
    // The same storage and port on a restart: the relay comes back as a person restarting it would.
    const launchRelay = async (port?: number) => {
      if (relayKind === 'app-copy') return startRelayServingAppCopy(state, port);
      ensureRelayEnvFile(envFile);
      return {
        relay: await startRelay({ persistTo: state, envFile, ...(port ? { port } : {}) }),
        app: undefined,
      };
    };
    const started = await launchRelay();
    let relay = started.relay;
    stops.push(() => relay.stop());
    const proxy = hostileProxy ? await HostileProxy.start(`http://127.0.0.1:${relay.port}`) : undefined;
    if (proxy) stops.push(() => proxy.stop());
    // WebAuthn needs a domain for its RP ID, not an IP address: the phones use localhost.
    const origin = proxy?.origin ?? `http://localhost:${relay.port}`;
    const push = await startPushService();
    stops.push(() => push.close());
    const pushService = new PushServiceClient(push.url);

    const addHost = async (setUp: HostSetUp) => {
      const machine = newMachine();
      stops.push(async () => rmSync(dirname(machine.home), { recursive: true, force: true }));
      await initMachine(machine, { relay: origin, ...setUp });
      const host = { machine, daemon: await startDaemon(machine) };
      stops.push(() => host.daemon.stop());
      return host;
    };
    const firstHost = await addHost({ ...hostSetUp, ...(hostName ? { name: hostName } : {}) });

    const phones: PairedBrowserPhone[] = [];
    const pairPhone: PhoneRig['pairPhone'] = async (
      phoneName,
      { machine = firstHost.machine, ...pairing } = {},
    ) => {
      const [trusted] = phones;
      const approve =
        trusted && !pairing.phone
          ? () => approvePending(trusted.browser, origin, new RegExp(`Add phone "${phoneName}"`))
          : undefined;
      const paired = await pairBrowserPhone(machine, origin, pushService, phoneName, {
        ...(approve ? { approve } : {}),
        ...pairing,
      });
      // A phone that joins another host is the same browser: it is closed once.
      if (!pairing.phone) {
        phones.push(paired);
        stops.push(() => paired.browser.close());
      }
      return paired;
    };
    for (const phoneName of phoneNames) await pairPhone(phoneName);

    const rig: PhoneRig = {
      state,
      app: started.app,
      get relay() {
        return relay;
      },
      proxy,
      origin,
      push,
      pushService,
      machine: firstHost.machine,
      get daemon() {
        return firstHost.daemon;
      },
      phones,
      addHost,
      pairPhone,
      restartRelay: async (whileDown) => {
        await relay.stop();
        await whileDown?.();
        ({ relay } = await launchRelay(relay.port));
      },
      restartDaemon: async () => {
        await firstHost.daemon.stop();
        firstHost.daemon = await startDaemon(firstHost.machine);
      },
      stop,
    };
    return rig;
  } catch (error) {
    await stop().catch(() => undefined); // the start's own failure is the one to report
    throw error;
  }
}
