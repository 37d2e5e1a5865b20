import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { signEnvelope } from '../shared/envelopes/signEnvelope.ts';
import type { HostFrame } from '../shared/messages/relayViews.ts';
import { AuditLog } from './audit/auditLog.ts';
import { loadConfig } from './config/config.ts';
import { tightenToOwnerOnly } from './config/fileModes.ts';
import { latchFiles, socketPath as defaultSocketPath } from './config/paths.ts';
import { Gatekeeper } from './gate/gatekeeper.ts';
import { loadHostIdentity } from './identity/hostIdentity.ts';
import { KillSwitch } from './kill-switch/killSwitch.ts';
import { PolicyKeeper } from './policy/policyKeeper.ts';
import { RelayClient } from './relay/relayClient.ts';
import { RelayConnection, type ConnectionStatus } from './relay/relayConnection.ts';
import { readGateRequest, type DaemonStatus } from './socket/localApi.ts';
import { StateStore } from './state/stateStore.ts';

const MAX_LOCAL_BODY_BYTES = 1024 * 1024;

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
  tightenToOwnerOnly(
    [files.config, files.hostKey, files.hostToken, files.totp, files.state, files.audit, files.policy],
    log,
  );
  const config = loadConfig(files.config);
  const host = await loadHostIdentity(files.hostKey);
  const store = new StateStore(files.state);
  const audit = new AuditLog(files.audit, store, { redactContent: config.audit.content === 'none' });
  const readToken = () =>
    existsSync(files.hostToken) ? readFileSync(files.hostToken, 'utf8').trim() : undefined;
  const relay = new RelayClient(config.relay.url, config.host.fleet, readToken);
  const relying = { origins: [config.relay.url], rpId: new URL(config.relay.url).hostname };
  const killSwitch = new KillSwitch({
    store,
    audit,
    host,
    fleet: config.host.fleet,
    quorum: config.killSwitch.quorum,
    relying,
  });
  const policy = new PolicyKeeper(files.policy, store, audit);
  const gatekeeper = new Gatekeeper({
    config,
    store,
    audit,
    relay,
    killSwitch,
    policy,
    relying,
    hostId: host.id,
    totpPath: files.totp,
  });

  let relayStatus: ConnectionStatus = 'connecting';
  let unreachableSince: number | undefined = Date.now();
  // The relay's switch as its last state frame said, to tell a replayed, finished freeze from a live one.
  let relayView = { seq: 0, epoch: 0, frozen: false };
  const finishedFreeze = (frame: HostFrame, epoch: number) =>
    frame.seq <= relayView.seq &&
    (epoch < relayView.epoch || (epoch === relayView.epoch && !relayView.frozen));
  const onFrame = async (frame: HostFrame): Promise<void> => {
    const { event } = frame;
    if ((event.type === 'frozen' || event.type === 'resumed') && finishedFreeze(frame, event.epoch)) return;
    switch (event.type) {
      case 'state':
        relayView = { seq: frame.seq, epoch: event.state.epoch, frozen: event.state.frozen };
        killSwitch.onRelayState(event.state);
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
      case 'frozen':
        await killSwitch.onFrozen(event.epoch, event.envelope);
        break;
      case 'resumed':
        await killSwitch.onResumed(event.epoch, event.votes);
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
    quorum: config.killSwitch.quorum,
    // From the start of the log the first time, so nothing decided before the first connection is lost.
    cursor: () => Number(store.meta('cursor') ?? 0),
    onFrame: (frame) => {
      frames = frames
        .then(() => onFrame(frame))
        .catch((error: unknown) => log(`an event failed: ${(error as Error).message}`));
    },
    onStatus: (status) => {
      relayStatus = status;
      if (status === 'connected') unreachableSince = undefined;
      else unreachableSince ??= Date.now();
    },
    log,
  });
  connection.start();

  // Strict mode: a relay out of reach for longer than the grace period freezes this host.
  const strictCheck = setInterval(() => {
    if (!config.killSwitch.strict || unreachableSince === undefined || killSwitch.state.frozen) return;
    if (Date.now() - unreachableSince >= config.killSwitch.graceSeconds * 1000) {
      killSwitch.freeze(
        'the relay has been unreachable longer than the grace period (strict mode)',
        'unreachable',
      );
      audit.append({ event: 'freeze', cause: 'unreachable', verified: true });
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
    return {
      v: 1,
      frozen: current.frozen,
      epoch: current.epoch,
      reason: current.reason,
      relay: relayStatus,
      devices: store.devices().length,
      quorum: config.killSwitch.quorum,
      pending: gatekeeper.pending,
      policy: !view.ok ? 'invalid' : view.loosening ? 'loosening_pending' : 'ok',
    };
  };

  const server = createServer((request, response) => {
    const route = `${request.method} ${request.url}`;
    void (async () => {
      try {
        if (route === 'POST /v1/gate') {
          const gateRequest = readGateRequest(await readJson(request));
          if ('error' in gateRequest)
            return send(response, 400, { error: { code: 'invalid_request', message: gateRequest.error } });
          // NDJSON: a "pending" line once a phone is asked (for the caller's countdown), then the answer.
          response.writeHead(200, { 'content-type': 'application/x-ndjson' });
          const answer = await gatekeeper.gate(gateRequest, (pending) =>
            response.write(`${JSON.stringify({ pending })}\n`),
          );
          response.end(`${JSON.stringify({ answer })}\n`);
          return;
        }
        if (route === 'POST /v1/fallback') {
          const body = (await readJson(request)) as { requestId?: unknown; answer?: unknown } | undefined;
          if (typeof body?.requestId !== 'string' || typeof body.answer !== 'string') {
            return send(response, 400, {
              error: { code: 'invalid_request', message: 'requestId and answer are required' },
            });
          }
          return send(response, 200, gatekeeper.answerFallback(body.requestId, body.answer));
        }
        if (route === 'GET /v1/status') return send(response, 200, status());
        if (route === 'POST /v1/panic') {
          const body = (await readJson(request)) as { reason?: unknown } | undefined;
          const reason =
            typeof body?.reason === 'string' && body.reason ? body.reason.slice(0, 200) : 'latch panic';
          killSwitch.freeze(reason, 'panic');
          audit.append({ event: 'freeze', cause: 'panic', signer: { role: 'host', id: host.id }, reason });
          const envelope = await signEnvelope(
            'freeze',
            { fleet: config.host.fleet, reason },
            { role: 'host', id: host.id },
            host.privateKey,
          );
          const sent = await relay.freeze(envelope);
          return send(response, 200, {
            ...status(),
            relayed: sent.ok,
            ...(sent.ok ? {} : { relayError: sent.failure.message }),
          });
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
        send(response, 400, { error: { code: 'invalid_request', message: (error as Error).message } });
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
      clearInterval(strictCheck);
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
