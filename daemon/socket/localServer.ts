import { chmodSync, existsSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Conversation } from '../gate/conversation.ts';
import { daemonLog as log } from '../output/daemonLog.ts';
import { FIRST_LINE_WITHIN_MS, serveGateConversation, UnfinishedLines } from './gateConversation.ts';
import { DAEMON_BUSY, type DaemonStatus, type GateAnswer, type GateRequest } from './localApi.ts';
import { otherDaemonOf, pidFileOf, removeOwnPidFile, writePidFile } from './daemonPidFile.ts';
import { checkSocketPathLength, InsecurePathError } from './securePath.ts';
import type { SwitchView } from './watchDaemon.ts';

const MAX_LOCAL_BODY_BYTES = 1024 * 1024;

/** What the daemon answers on its socket, one handler per route of the local API (docs/daemon.md). */
export interface LocalRoutes {
  /** One agent call's whole conversation, on a connection that opens with `{`. */
  gate(call: GateRequest, conversation: Conversation): Promise<GateAnswer>;
  /** `POST /v1/enrol`: the body as sent; the status and body to answer with. */
  enrol(body: unknown): Promise<{ status: number; body: unknown }>;
  /** `GET /v1/status`. */
  status(): DaemonStatus;
  /** `POST /v1/panic`: the reason as sent, if it is a string. */
  panic(reason: string): Promise<object>;
  /** The kill switch's state and rules, as `GET /v1/watch` streams them: now, then at each change. */
  watched(): SwitchView;
}

export interface LocalServer {
  socketPath: string;
  /** Streams the state `watched` gives now to every `GET /v1/watch` client. */
  notifyWatchers(): void;
  /**
   * Settles once the socket file is no longer the one this server made (removed, or another in
   * its place, another daemon's when the pid file names one): no caller can reach this daemon.
   */
  lost: Promise<{ why: string }>;
  /** Stops serving; removes the socket file only while it is still this server's. */
  close(): Promise<void>;
}

/** How often the daemon checks that its socket file is still the one it made. */
const OWN_SOCKET_CHECK_MS = 2000;

/**
 * Callers at once: each gated call that waits for a phone holds one, and each watcher. Past this
 * many, a caller is told the daemon is busy (`daemon_busy`) as soon as it says anything.
 */
const MOST_CONNECTIONS = 512;
/**
 * Watchers are never timed out: a budget of their own keeps them from taking every place. Each
 * running `latch exec` holds one (`latch exec -- claude` for every session, a `make -j` of steps).
 */
const MOST_WATCHERS = 256;
/** Places gated calls cannot take, so that status and panic answer while calls hold the rest. */
const KEPT_FOR_PLAIN_CALLS = 32;
const MOST_GATE_CALLS = MOST_CONNECTIONS - MOST_WATCHERS - KEPT_FOR_PLAIN_CALLS;
/**
 * Past this many, a connection is closed at once, unheard: thousands held open by one process
 * would otherwise take the daemon's memory and files. The margin lets callers past the budget be told.
 */
const MOST_OPEN = MOST_CONNECTIONS + 64;

/** What a caller past a budget is told, on a gate line or in an HTTP 503 (docs/daemon.md). */
const busy = (held: string) => ({ code: DAEMON_BUSY, message: `the daemon is busy (${held} held)` });

async function readJson(request: IncomingMessage): Promise<unknown> {
  // A body that never ends would hold its connection: it comes within the time its head had.
  const late = setTimeout(() => request.destroy(), FIRST_LINE_WITHIN_MS);
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      if (size > MAX_LOCAL_BODY_BYTES) throw new Error('the request is over 1 MiB');
      chunks.push(chunk as Buffer);
    }
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  } finally {
    clearTimeout(late);
  }
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** How long a starting daemon waits for a connection to the socket to be taken or refused. */
const PROBE_WITHIN_MS = 2000;

/**
 * What connecting to the socket at `path` says: `answers` (something accepts), `none` (no file),
 * `nobody` (ECONNREFUSED: a socket file nothing listens on, as a crash leaves it), or any other
 * error's code (EAGAIN: a full backlog; ETIMEDOUT: no word in time), which says nothing either way.
 */
function probeSocket(path: string): Promise<string> {
  return new Promise<string>((resolve) => {
    const probe = connect(path);
    const late = setTimeout(() => {
      probe.destroy();
      resolve('ETIMEDOUT');
    }, PROBE_WITHIN_MS);
    probe.once('connect', () => {
      clearTimeout(late);
      probe.destroy();
      resolve('answers');
    });
    probe.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(late);
      resolve(
        error.code === 'ECONNREFUSED'
          ? 'nobody'
          : error.code === 'ENOENT'
            ? 'none'
            : (error.code ?? error.message),
      );
    });
  });
}

/**
 * Makes the socket's directory (0700) and clears a dead socket file. Refuses a path too long to
 * bind, a directory that exists with a wider mode, and a place another daemon still holds: one its
 * pid file names as running (answering or not), or a socket that does not say nobody listens. Only
 * a socket file that refuses connections (ECONNREFUSED) is removed.
 */
async function prepareSocket(path: string, pidFile: string): Promise<void> {
  checkSocketPathLength(path);
  const directory = dirname(path);
  if (!existsSync(directory)) mkdirSync(directory, { recursive: true, mode: 0o700 });
  const { mode, uid } = lstatSync(directory);
  if ((mode & 0o777) !== 0o700)
    throw new InsecurePathError(
      `${directory} has mode ${(mode & 0o777).toString(8)}; it must be 0700 (chmod 700 ${directory})`,
    );
  const me = process.getuid?.();
  if (me !== undefined && uid !== me)
    throw new InsecurePathError(`${directory} is owned by another user (uid ${uid}); it must be yours`);
  const other = otherDaemonOf(pidFile);
  const found = existsSync(path) ? await probeSocket(path) : 'none';
  // Without a start time to go by, a live pid whose socket nobody holds is taken for a pid reused.
  const answering = found === 'answers';
  if (other && (other.sure || (found !== 'none' && found !== 'nobody')))
    throw new Error(
      answering
        ? `another daemon is already listening on ${path} (pid ${other.pid})`
        : `another daemon (pid ${other.pid}) runs on ${path} but ${
            found === 'none' || found === 'nobody'
              ? `has lost its socket: it stops by itself within seconds while it runs (kill ${other.pid} if it does not), then start this one again`
              : `does not take connections now (${found}: busy, or stopped): stop it first (kill ${other.pid}; under systemd, systemctl --user stop latch), or start this one with another XDG_RUNTIME_DIR`
          }`,
    );
  if (found === 'none') return;
  if (found === 'answers') throw new Error(`another daemon is already listening on ${path}`);
  if (found !== 'nobody')
    throw new Error(
      `a daemon may run on ${path} but does not take connections (${found}: busy, or stopped), so its socket is left in place: ` +
        `stop that daemon first, or remove ${path} once none runs`,
    );
  unlinkSync(path);
  log(`removed a dead socket file at ${path}`);
}

/** The daemon's local API on its Unix socket, created 0600 in a 0700 directory. */
export async function serveLocalApi(socketPath: string, routes: LocalRoutes): Promise<LocalServer> {
  const watchers = new Set<ServerResponse>();
  const watchLine = () => `${JSON.stringify(routes.watched())}\n`;

  const answer = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    // By its path: a query string (`?x=1`) names no other route.
    const route = `${request.method} ${(request.url ?? '').split('?', 1)[0]}`;
    if (route === 'POST /v1/enrol') {
      const enrolled = await routes.enrol(await readJson(request));
      return send(response, enrolled.status, enrolled.body);
    }
    if (route === 'GET /v1/status') return send(response, 200, routes.status());
    if (route === 'POST /v1/panic') {
      const body = (await readJson(request)) as { reason?: unknown } | undefined;
      const outcome = await routes.panic(typeof body?.reason === 'string' ? body.reason : '');
      return send(response, 200, { ...routes.status(), ...outcome });
    }
    if (route === 'GET /v1/watch') {
      if (watchers.size >= MOST_WATCHERS)
        return send(response, 503, { error: busy(`${MOST_WATCHERS} watch connections`) });
      response.writeHead(200, { 'content-type': 'application/x-ndjson' }).write(watchLine());
      watchers.add(response);
      request.on('close', () => watchers.delete(response));
      return;
    }
    send(response, 404, { error: { code: 'not_found', message: `no route ${route}` } });
  };

  // An HTTP connection's clock runs until its request's head is read. Node's own header timeouts
  // run only on a server that listens itself; this one is handed its connections.
  const awaitingHead = new Map<Socket, NodeJS.Timeout>();
  const headRead = (connection: Socket) => {
    clearTimeout(awaitingHead.get(connection));
    awaitingHead.delete(connection);
  };
  const served = new WeakSet<Socket>();
  const overBudget = new WeakSet<Socket>();
  const http = createHttpServer((request, response) => {
    const connection = request.socket as Socket;
    // One request per connection: a second head, even one sent at once behind the first
    // (pipelined), would have no clock of its own.
    if (served.has(connection)) return void connection.destroy();
    served.add(connection);
    headRead(connection);
    response.shouldKeepAlive = false;
    if (overBudget.has(connection))
      return send(response, 503, { error: busy(`${MOST_CONNECTIONS} connections`) });
    answer(request, response).catch((error: unknown) => {
      // Mid-stream, the client reads a cut answer as no answer.
      if (response.headersSent) response.destroy();
      else send(response, 400, { error: { code: 'invalid_request', message: (error as Error).message } });
    });
  });

  // HTTP opens with its method; anything else is a gate conversation, which opens with its call,
  // a JSON object, and says what is wrong with any other line. The gate is
  // what every hook process waits on, and speaking plain NDJSON spares each one Node's HTTP
  // client (docs/daemon.md).
  const connections = new Set<Socket>();
  const unfinished = new UnfinishedLines();
  let gateCalls = 0;
  const server = createServer({ allowHalfOpen: true }, (connection) => {
    connections.add(connection);
    if (connections.size > MOST_CONNECTIONS) overBudget.add(connection);
    connection.on('close', () => {
      connections.delete(connection);
      headRead(connection);
    });
    connection.on('error', () => connection.destroy());
    const silent = setTimeout(() => connection.destroy(), FIRST_LINE_WITHIN_MS);
    // Half open, a caller that closes its end before it says anything would hold its place.
    const goneSilent = () => connection.destroy();
    connection.once('end', goneSilent);
    connection.once('data', (first: Buffer) => {
      connection.off('end', goneSilent);
      connection.pause();
      connection.unshift(first);
      // HTTP's request line starts with its method, in capitals; anything else is a gate line,
      // whose conversation says what is wrong with it (`[1]`, a byte-order mark, a bare newline).
      const startsRequestLine = /[A-Z]/.test(String.fromCharCode(first[0]!));
      if (!startsRequestLine) {
        const held = overBudget.has(connection)
          ? `${MOST_CONNECTIONS} connections`
          : gateCalls >= MOST_GATE_CALLS
            ? `${MOST_GATE_CALLS} gate connections`
            : undefined;
        // Told on the line its client reads; the silent clock closes it if it keeps its end open.
        if (held) return void connection.end(`${JSON.stringify({ refused: busy(held) })}\n`).resume();
        // The conversation keeps its own clock for its first line.
        clearTimeout(silent);
        gateCalls += 1;
        connection.once('close', () => (gateCalls -= 1));
        serveGateConversation(connection, routes.gate, unfinished).catch(() => connection.destroy());
      } else {
        awaitingHead.set(connection, silent);
        http.emit('connection', connection);
      }
      connection.resume();
    });
  });
  server.maxConnections = MOST_OPEN;
  const pidFile = pidFileOf(socketPath);
  await prepareSocket(socketPath, pidFile);
  // The socket is created 0600 from the start (no window with a wider mode), then checked.
  const previousUmask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        // Bound in between by a daemon started at the same moment: only one can bind.
        reject(
          error.code === 'EADDRINUSE'
            ? new Error(`another daemon is already listening on ${socketPath}`)
            : error,
        ),
      );
      server.listen(socketPath, resolve);
    });
  } finally {
    process.umask(previousUmask);
  }
  chmodSync(socketPath, 0o600);
  // Written once the socket is this daemon's: a daemon starting later finds it running, answering or not.
  writePidFile(pidFile);
  log(`listening on ${socketPath}`);

  // A socket file removed while the daemon runs leaves it unreachable, and then closing the server
  // (which unlinks whatever is at its path) would remove the socket of a daemon started since.
  const made = lstatSync(socketPath);
  // A folder it can no longer look into (chmod 000, a file in its place) is not its own either.
  const stillOurs = () => {
    try {
      const now = lstatSync(socketPath, { throwIfNoEntry: false });
      return now?.ino === made.ino && now.dev === made.dev;
    } catch {
      return false;
    }
  };
  let checking: NodeJS.Timeout | undefined;
  const lost = new Promise<{ why: string }>((resolve) => {
    checking = setInterval(() => {
      if (stillOurs()) return;
      clearInterval(checking);
      // Who holds the socket now is told by the pid file, not by connecting: a daemon may be busy.
      let other;
      try {
        other = otherDaemonOf(pidFile);
      } catch {
        other = undefined;
      }
      const taken = existsSync(socketPath)
        ? other
          ? `was taken by another daemon (pid ${other.pid})`
          : 'was replaced by another process'
        : 'is gone';
      resolve({ why: `its socket ${socketPath} ${taken}` });
    }, OWN_SOCKET_CHECK_MS).unref();
  });

  return {
    socketPath,
    notifyWatchers: () => {
      const line = watchLine();
      for (const watcher of watchers) watcher.write(line);
    },
    lost,
    close: async () => {
      clearInterval(checking);
      for (const watcher of watchers) watcher.end();
      for (const connection of connections) connection.destroy();
      removeOwnPidFile(pidFile);
      if (!stillOurs()) return void server.unref();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
