import { filesOverBudget } from './audit/auditRotation.ts';
import { RelayNoise } from './audit/relayNoise.ts';
import { ownerOnlyPlaces, tightenToOwnerOnly } from './config/fileModes.ts';
import { latchFiles, socketPath as defaultSocketPath } from './config/paths.ts';
import { Gatekeeper } from './gate/gatekeeper.ts';
import { withdrawLeftBehind } from './gate/withdrawal.ts';
import { revokeFromPhone } from './grants/revokeFromPhone.ts';
import { openPanicContext, panic, tellFleetOfPanic } from './kill-switch/panic.ts';
import { pingEveryMs, RelayReachability } from './kill-switch/strictMode.ts';
import { daemonLog as log } from './output/daemonLog.ts';
import { enrol } from './pairing/enrol.ts';
import { RevokesFromApp } from './pairing/revokeDevice.ts';
import { PolicyKeeper } from './policy/policyKeeper.ts';
import { FleetLog } from './relay/fleetLog.ts';
import { holdEveryRun } from './exec/holdEveryRun.ts';
import { RelayConnection } from './relay/relayConnection.ts';
import type { DaemonStatus } from './socket/localApi.ts';
import { serveLocalApi } from './socket/localServer.ts';
import { openState } from './state/openState.ts';
import { schedulePrune } from './state/pruneState.ts';

/** How long a stopping daemon waits for the relay to hear what it withdraws (systemd allows 90 s). */
const WITHDRAW_ON_STOP_MS = 3000;

export interface RunningDaemon {
  socketPath: string;
  /**
   * Settles once callers can no longer reach this daemon through its socket file (localServer),
   * after the audit log has a `socket_lost` line saying why.
   */
  unreachable: Promise<{ why: string }>;
  stop(): Promise<void>;
}

/**
 * `latch daemon`: opens the state, wires the gate, the kill switch and the relay's event log
 * together, and serves the local API on the socket. Wiring only: each part lives in its room
 * (docs/architecture.md).
 */
export async function runDaemon(home: string, options: { socketPath?: string } = {}): Promise<RunningDaemon> {
  const files = latchFiles(home);
  tightenToOwnerOnly(ownerOnlyPlaces(home), log);
  const { store, audit, configKeeper, config } = openState(files);
  // The config in force now: a tightening made while the daemon runs applies at once.
  const inForce = () => {
    const view = configKeeper.current();
    return view.ok ? view.config : (configKeeper.approved() ?? config);
  };
  const quorum = () => inForce().killSwitch.quorum;
  const panicContext = await openPanicContext(files, config, { store, audit }, quorum);
  const { killSwitch, relay, host, fleet, relying } = panicContext;
  const policy = new PolicyKeeper(files.policy, store, audit);
  const gatekeeper = new Gatekeeper({
    config,
    configKeeper,
    store,
    audit,
    relay,
    killSwitch,
    policy,
    relying,
    hostId: host.id,
    totpPath: files.totp,
    freezeFleet: (reason) => panic(panicContext, reason, 'reported on a phone'),
  });

  const leftBehind = withdrawLeftBehind(store, audit);
  // Finished records past `[retention] requests_days` or `max_requests` are forgotten at start and
  // then regularly (and past max_requests as calls are saved: gate/asking).
  const pruning = schedulePrune(store, () => inForce().retention, log);

  const revokesFromApp = new RevokesFromApp({ store, audit, fleet, relying });
  const grantRevokeNoise = new RelayNoise(audit);
  const cursor = {
    // From the start of the log the first time, so nothing decided before the first connection is lost.
    read: () => Number(store.meta('cursor') ?? 0),
    write: (seq: number) => store.setMeta('cursor', String(seq)),
  };
  // Frames from the relay go straight to the gate's and the kill switch's handlers.
  const fleetLog = new FleetLog(
    {
      state: async ({ state }) => {
        await killSwitch.onRelayState(state);
        // The relay answers again: a panic it missed is told now.
        await tellFleetOfPanic(panicContext);
      },
      approved: ({ requestId, token }) => gatekeeper.onApproved(requestId, token),
      denied: ({ requestId, envelope }) => gatekeeper.onDenied(requestId, envelope),
      expired: ({ requestId }) => gatekeeper.onExpired(requestId),
      grant_revoked: ({ envelope }) =>
        revokeFromPhone(envelope, { store, audit, noise: grantRevokeNoise, hostId: host.id }),
      device_revoked: (event) => revokesFromApp.onDeviceRevoked(event),
      frozen: ({ envelope }) => killSwitch.applyFreeze(envelope, 'relay'),
      resumed: ({ freeze, votes }) => killSwitch.onResumed(freeze, votes),
      paired: () => {},
    },
    cursor,
    log,
  );
  const reachability = new RelayReachability(killSwitch, () => inForce().killSwitch);
  const connection = new RelayConnection({
    client: relay,
    quorum,
    pingEveryMs: () => pingEveryMs(inForce().killSwitch),
    cursor: cursor.read,
    onFrame: (frame) => fleetLog.receive(frame),
    onStatus: (status) => {
      reachability.update(status);
      if (status === 'connected')
        for (const requestId of leftBehind.splice(0)) void relay.withdrawRequest(requestId);
    },
    log,
  });
  connection.start();

  const status = (): DaemonStatus => {
    const current = killSwitch.state;
    const view = policy.current();
    const configView = configKeeper.current();
    return {
      v: 1,
      frozen: current.frozen,
      epoch: current.epoch,
      reason: current.reason,
      relay: reachability.status,
      devices: store.devices().length,
      revokesAsked: store.devices().filter(({ revokeAsked }) => revokeAsked).length,
      quorum: quorum(),
      pending: gatekeeper.pending,
      policy: !view.ok ? 'invalid' : view.loosening ? 'loosening_pending' : 'ok',
      config: !configView.ok ? 'invalid' : configView.loosening ? 'loosening_pending' : 'ok',
      auditOverBudget: filesOverBudget(files.audit, store, inForce().audit),
    };
  };
  const server = await serveLocalApi(options.socketPath ?? defaultSocketPath(), {
    gate: (call, conversation) => gatekeeper.gate(call, conversation),
    enrol: (body) =>
      enrol(body, { gatekeeper, store, audit, totpPath: files.totp, hostName: config.host.name }),
    status,
    panic: (reason) => panic(panicContext, reason),
    watched: () => {
      const { strict, graceSeconds, onFreeze } = inForce().killSwitch;
      const { frozen, reason } = killSwitch.state;
      return { frozen, reason, rules: { strict, graceSeconds, onFreeze } };
    },
  });
  killSwitch.onChange(() => server.notifyWatchers());
  // A command that kills or stops its own latch exec is not out of a freeze's reach.
  const everyRun = holdEveryRun(server.socketPath);
  const followSwitch = () => everyRun.follow(killSwitch.state.frozen, inForce().killSwitch.onFreeze);
  killSwitch.onChange(followSwitch);
  followSwitch();
  audit.append({ event: 'daemon_started', host: host.id, fleet: config.host.fleet });

  return {
    socketPath: server.socketPath,
    unreachable: server.lost.then((lost) => {
      try {
        audit.append({ event: 'socket_lost', socket: server.socketPath, why: lost.why });
      } catch (error) {
        log(`could not write the audit line for a lost socket: ${(error as Error).message}`);
      }
      return lost;
    }),
    stop: async () => {
      everyRun.stop();
      await gatekeeper.withdrawAll(WITHDRAW_ON_STOP_MS);
      reachability.stop();
      pruning.stop();
      connection.stop();
      await server.close();
      fleetLog.stop();
      await fleetLog.settled();
      store.close();
    },
  };
}
