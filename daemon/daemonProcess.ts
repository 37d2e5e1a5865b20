import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { freezeId } from '../shared/kill-switch/freezeId.ts';
import type { HostFrame } from '../shared/messages/relayViews.ts';
import { tightenToOwnerOnly } from './config/fileModes.ts';
import { latchFiles, ownerOnlyFiles, socketPath as defaultSocketPath } from './config/paths.ts';
import { Gatekeeper } from './gate/gatekeeper.ts';
import { withdrawLeftBehind } from './gate/withdrawal.ts';
import { revokeFromPhone } from './grants/revokeFromPhone.ts';
import { loadHostIdentity } from './identity/hostIdentity.ts';
import { KillSwitch } from './kill-switch/killSwitch.ts';
import { panic, tellFleetOfPanic } from './kill-switch/panic.ts';
import { enrol } from './pairing/enrol.ts';
import { PolicyKeeper } from './policy/policyKeeper.ts';
import { RelayClient } from './relay/relayClient.ts';
import { RelayConnection, type ConnectionStatus } from './relay/relayConnection.ts';
import { serveGateConversation } from './socket/gateConversation.ts';
import type { DaemonStatus } from './socket/localApi.ts';
import { openState } from './state/openState.ts';

const MAX_LOCAL_BODY_BYTES = 1024 * 1024;
/** How long a stopping daemon waits for the relay to hear what it withdraws (systemd allows 90 s). */
const WITHDRAW_ON_STOP_MS = 3000;

export interface RunningDaemon {
  socketPath: string;
  stop(): Promise<void>;
}

function log(line: string): void {
  process.stderr.write(`latch daemon: ${line}\n`);
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_LOCAL_BODY_BYTES) throw new Error('the request is over 1 MiB');
    chunks.push(chunk as Buffer);
  }
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * Makes the socket's directory (0700) and clears a dead socket file. Refuses a directory that
 * exists with a wider mode, and a socket another daemon still answers on.
 */
async function prepareSocket(path: string): Promise<void> {
  const directory = dirname(path);
  if (!existsSync(directory)) mkdirSync(directory, { recursive: true, mode: 0o700 });
  const mode = lstatSync(directory).mode & 0o777;
  if (mode !== 0o700)
    throw new Error(`${directory} has mode ${mode.toString(8)}; it must be 0700 (chmod 700 ${directory})`);
  if (!existsSync(path)) return;
  const alive = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (alive) throw new Error(`another daemon is already listening on ${path}`);
  unlinkSync(path);
  log(`removed a dead socket file at ${path}`);
}

/** `latch daemon`: loads everything, listens on the socket, follows the relay. */
export async function runDaemon(home: string, options: { socketPath?: string } = {}): Promise<RunningDaemon> {
  const files = latchFiles(home);
  tightenToOwnerOnly(ownerOnlyFiles(files), log);
  const { store, audit, configKeeper, config } = openState(files);
  // The config in force now: a tightening made while the daemon runs applies at once.
  const inForce = () => {
    const view = configKeeper.current();
    return view.ok ? view.config : (configKeeper.lastInForce() ?? config);
  };
  const host = await loadHostIdentity(files.hostKey);
  const readToken = () =>
    existsSync(files.hostToken) ? readFileSync(files.hostToken, 'utf8').trim() : undefined;
  const relay = new RelayClient(config.relay.url, config.host.fleet, readToken);
  const relying = { origins: [config.relay.url], rpId: new URL(config.relay.url).hostname };
  const killSwitch = new KillSwitch({
    store,
    audit,
    host,
    fleet: config.host.fleet,
    quorum: () => inForce().killSwitch.quorum,
    relying,
  });
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
    // Declared below; called only once the daemon runs.
    freezeFleet: (reason) => panic(panicContext, reason, 'reported on a phone'),
  });

  const leftBehind = withdrawLeftBehind(store, audit);

  // Bounded state for a long-running daemon: settled requests past their retention go, at start
  // and once a day.
  store.pruneRequests(Date.now());
  const dailyPrune = setInterval(() => store.pruneRequests(Date.now()), 86_400_000);

  let relayStatus: ConnectionStatus = 'connecting';
  let unreachableSince: number | undefined = Date.now();
  const panicContext = { killSwitch, relay, store, audit, host, fleet: config.host.fleet };
  // A state frame sums up the relay's log so far; the frames replayed after it, up to its seq,
  // are that past. A freeze among them other than the one the state holds in force ended before
  // this connection (and this host never saw it): applied now, it would end the freeze in force,
  // and the votes that ended it would then lift this host while the fleet stays frozen. Passing
  // it over is what a relay withholding it would cause, so the relay's word is enough for that.
  let summed: { seq: number; inForce: string | null } = { seq: 0, inForce: null };
  const onFrame = async (frame: HostFrame): Promise<void> => {
    const { event } = frame;
    switch (event.type) {
      case 'state':
        summed = {
          seq: frame.seq,
          inForce: event.state.frozen && event.state.freeze ? await freezeId(event.state.freeze) : null,
        };
        await killSwitch.onRelayState(event.state);
        // The relay answers again: a panic it missed is told now.
        await tellFleetOfPanic(panicContext);
        // A cursor beyond the relay's log did not come from it: the relay replays its whole log
        // after this frame, and the cursor follows the relay's numbering from here.
        if (frame.seq < Number(store.meta('cursor') ?? 0)) store.setMeta('cursor', String(frame.seq));
        return;
      case 'approved':
        await gatekeeper.onApproved(event.requestId, event.token);
        break;
      case 'denied':
        await gatekeeper.onDenied(event.requestId, event.envelope);
        break;
      case 'expired':
        gatekeeper.onExpired(event.requestId);
        break;
      case 'grant_revoked':
        await revokeFromPhone(event.envelope, { store, audit, hostId: host.id });
        break;
      case 'frozen':
        if (frame.seq > summed.seq || (await freezeId(event.envelope)) === summed.inForce)
          await killSwitch.applyFreeze(event.envelope, 'relay');
        break;
      case 'resumed':
        await killSwitch.onResumed(event.freeze, event.votes);
        break;
      case 'paired':
        break;
    }
    store.setMeta('cursor', String(Math.max(frame.seq, Number(store.meta('cursor') ?? 0))));
  };
  // Frames are handled one at a time, in order, each to the end before the next.
  let frames = Promise.resolve();
  const connection = new RelayConnection({
    client: relay,
    quorum: () => inForce().killSwitch.quorum,
    // From the start of the log the first time, so nothing decided before the first connection is lost.
    cursor: () => Number(store.meta('cursor') ?? 0),
    onFrame: (frame) => {
      frames = frames
        .then(() => onFrame(frame))
        .catch((error: unknown) => log(`an event failed: ${(error as Error).message}`));
    },
    onStatus: (status) => {
      relayStatus = status;
      if (status === 'connected') {
        unreachableSince = undefined;
        for (const requestId of leftBehind.splice(0)) void relay.withdrawRequest(requestId);
      } else unreachableSince ??= Date.now();
    },
    log,
  });
  connection.start();

  // Strict mode: a relay out of reach for longer than the grace period freezes this host.
  const strictCheck = setInterval(() => {
    if (!inForce().killSwitch.strict || unreachableSince === undefined || killSwitch.state.frozen) return;
    if (Date.now() - unreachableSince >= inForce().killSwitch.graceSeconds * 1000) {
      killSwitch.freezeUnreachable(
        'the relay has been unreachable longer than the grace period (strict mode)',
      );
    }
  }, 1000);

  const watchers = new Set<ServerResponse>();
  killSwitch.onChange((state) => {
    const line = `${JSON.stringify({ frozen: state.frozen, reason: state.reason })}\n`;
    for (const watcher of watchers) watcher.write(line);
  });

  const status = (): DaemonStatus => {
    const current = killSwitch.state;
    const view = policy.current();
    const configView = configKeeper.current();
    return {
      v: 1,
      frozen: current.frozen,
      epoch: current.epoch,
      reason: current.reason,
      relay: relayStatus,
      devices: store.devices().length,
      quorum: inForce().killSwitch.quorum,
      pending: gatekeeper.pending,
      policy: !view.ok ? 'invalid' : view.loosening ? 'loosening_pending' : 'ok',
      config: !configView.ok ? 'invalid' : configView.loosening ? 'loosening_pending' : 'ok',
    };
  };

  const server = createServer((request, response) => {
    const route = `${request.method} ${request.url}`;
    void (async () => {
      try {
        if (route === 'POST /v1/gate')
          return await serveGateConversation(request, response, (call, conversation) =>
            gatekeeper.gate(call, conversation),
          );
        if (route === 'POST /v1/enrol') {
          const enrolled = await enrol(await readJson(request), {
            gatekeeper,
            store,
            audit,
            totpPath: files.totp,
            hostName: config.host.name,
          });
          return send(response, enrolled.status, enrolled.body);
        }
        if (route === 'GET /v1/status') return send(response, 200, status());
        if (route === 'POST /v1/panic') {
          const body = (await readJson(request)) as { reason?: unknown } | undefined;
          const outcome = await panic(panicContext, typeof body?.reason === 'string' ? body.reason : '');
          return send(response, 200, { ...status(), ...outcome });
        }
        if (route === 'GET /v1/watch') {
          response.writeHead(200, { 'content-type': 'application/x-ndjson' });
          response.write(
            `${JSON.stringify({ frozen: killSwitch.state.frozen, reason: killSwitch.state.reason })}\n`,
          );
          watchers.add(response);
          request.on('close', () => watchers.delete(response));
          return;
        }
        send(response, 404, { error: { code: 'not_found', message: `no route ${route}` } });
      } catch (error) {
        // Mid-conversation, the client reads a cut answer as no answer: a deny.
        if (response.headersSent) response.destroy();
        else send(response, 400, { error: { code: 'invalid_request', message: (error as Error).message } });
      }
    })();
  });

  const socketPath = options.socketPath ?? defaultSocketPath();
  await prepareSocket(socketPath);
  // The socket is created 0600 from the start (no window with a wider mode), then checked.
  const previousUmask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, resolve);
    });
  } finally {
    process.umask(previousUmask);
  }
  chmodSync(socketPath, 0o600);
  audit.append({ event: 'daemon_started', host: host.id, fleet: config.host.fleet });
  log(`listening on ${socketPath}`);

  return {
    socketPath,
    stop: async () => {
      await gatekeeper.withdrawAll(WITHDRAW_ON_STOP_MS);
      clearInterval(strictCheck);
      clearInterval(dailyPrune);
      connection.stop();
      for (const watcher of watchers) watcher.end();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await frames;
      store.close();
    },
  };
}
