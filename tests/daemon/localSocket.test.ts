import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../daemon/gate/conversation.ts';
import { callDaemon } from '../../daemon/socket/daemonClient.ts';
import { gateCall } from '../../daemon/socket/gateClient.ts';
import type { DaemonStatus, GateAnswer, GateRequest } from '../../daemon/socket/localApi.ts';
import { serveLocalApi, type LocalRoutes, type LocalServer } from '../../daemon/socket/localServer.ts';
import { watchDaemon } from '../../daemon/socket/watchDaemon.ts';

/**
 * The daemon's socket carries two things: HTTP on a connection that opens with a method (status,
 * panic, enrol, watch); and a gate conversation, plain NDJSON, on any other.
 */

const STATUS: DaemonStatus = {
  v: 1,
  frozen: false,
  epoch: 0,
  reason: null,
  relay: 'connected',
  devices: 1,
  revokesAsked: 0,
  quorum: 1,
  pending: 0,
  policy: 'ok',
  config: 'ok',
  auditOverBudget: 0,
};

const ALLOW: GateAnswer = { decision: 'allow', reason: 'allowed by policy rule "reads"', via: 'policy' };

let cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** How many times the status route ran, in any test. */
let statusAsked = 0;

async function serve(gate: LocalRoutes['gate']): Promise<LocalServer> {
  const directory = mkdtempSync(join(tmpdir(), 'latch-socket-'));
  mkdirSync(join(directory, 'run'), { mode: 0o700 });
  const server = await serveLocalApi(join(directory, 'run', 'daemon.sock'), {
    gate,
    enrol: async () => ({ status: 400, body: {} }),
    status: () => {
      statusAsked += 1;
      return STATUS;
    },
    panic: async () => ({}),
    watched: () => ({
      frozen: false,
      reason: null,
      rules: { strict: false, graceSeconds: 120, onFreeze: 'stop' },
    }),
  });
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  cleanups.push(() => server.close());
  return server;
}

/** Writes `text` on a fresh connection and reads everything the daemon says until it closes. */
function converse(socketPath: string, text: string, keepOpen = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection: Socket = connect(socketPath);
    let heard = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => (heard += chunk));
    connection.on('close', () => resolve(heard));
    connection.on('error', reject);
    if (keepOpen) connection.write(text);
    else connection.end(text);
  });
}

/** What a run's watch of the switch hears first at `socketPath`: why it was lost, and whether busy. */
const lostWatch = (socketPath: string) =>
  new Promise<[string, boolean]>((resolve) => {
    const stop = watchDaemon(
      {
        onState: () => {},
        onLost: (reason, busy) => {
          stop();
          resolve([reason, busy]);
        },
        onBack: () => {},
      },
      { socketPath },
    );
  });

/** Once the connections that held the daemon are let go, a call is served again. */
const servedOnceLetGo = (server: LocalServer) =>
  expect.poll(() => gateCall({ tool: 'Read', paths: [] }, { socketPath: server.socketPath })).toEqual(ALLOW);

describe("the daemon's socket", () => {
  it('answers a gate conversation in NDJSON and HTTP routes beside it', async () => {
    const asked: GateRequest[] = [];
    const server = await serve(async (call) => {
      asked.push(call);
      return ALLOW;
    });
    expect(
      await gateCall({ tool: 'Read', paths: ['/etc/hosts'] }, { socketPath: server.socketPath }),
    ).toEqual(ALLOW);
    expect(asked.map((call) => [call.tool, call.paths])).toEqual([['Read', ['/etc/hosts']]]);
    expect(await callDaemon('GET', '/v1/status', undefined, { socketPath: server.socketPath })).toEqual(
      STATUS,
    );
  });

  it('refuses a first line that is not a call with a refused line, and asks nothing', async () => {
    let asked = 0;
    const server = await serve(async () => {
      asked += 1;
      return ALLOW;
    });
    const heard = await converse(server.socketPath, '{"tool": 5}\n', true);
    expect(JSON.parse(heard)).toEqual({
      refused: { code: 'invalid_request', message: 'tool must be a string' },
    });
    // The call is at fault, not the daemon: the client says so, not "unreachable".
    await expect(
      gateCall({ paths: ['/etc/hosts'] }, { socketPath: server.socketPath }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'the daemon refused the request: tool is required',
    });
    expect(asked).toBe(0);
  });

  it('answers a first line that is neither HTTP nor a JSON object with a refused line saying why (review R8)', async () => {
    const server = await serve(async () => ALLOW);
    for (const line of ['[1]\n', 'null\n', '\uFEFF{"tool":"Read"}\n', '\n'])
      expect(JSON.parse(await converse(server.socketPath, line, true))).toMatchObject({
        refused: { code: 'invalid_request', message: expect.any(String) },
      });
  });

  it('serves a route whatever query string follows its path', async () => {
    const server = await serve(async () => ALLOW);
    const heard = await converse(
      server.socketPath,
      'GET /v1/status?x=1 HTTP/1.1\r\nHost: latch\r\n\r\n',
      true,
    );
    expect(heard).toMatch(/^HTTP\/1\.1 200/);
  });

  it('refuses a first line over 1 MiB with a line saying so, whether its newline has come or not', async () => {
    let asked = 0;
    const server = await serve(async () => {
      asked += 1;
      return ALLOW;
    });
    const refused = {
      refused: { code: 'invalid_request', message: 'a line of the request is over 1048576 bytes' },
    };
    const pad = 'x'.repeat(1024 * 1024);
    expect(JSON.parse(await converse(server.socketPath, `{"tool":"Read","pad":"${pad}`, true))).toEqual(
      refused,
    );
    // Its newline in the chunk that crosses the cap: measured all the same, as a line.
    expect(JSON.parse(await converse(server.socketPath, `{"tool":"Read","pad":"${pad}"}\n`, true))).toEqual(
      refused,
    );
    expect(asked).toBe(0);
  });

  it('closes a connection its caller keeps open after the last line, which then holds nothing', async () => {
    const server = await serve(async () => ALLOW);
    // A caller that never closes its own end, as one holding the daemon's memory would, and
    // writes on: once the daemon has closed its connection, a write fails.
    const connection = connect({ path: server.socketPath, allowHalfOpen: true });
    cleanups.push(() => connection.destroy());
    let heard = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => (heard += chunk));
    const closedByTheDaemon = new Promise<string>((resolve) =>
      connection.on('error', (error) => resolve((error as NodeJS.ErrnoException).code!)),
    );
    connection.write('{"tool": 5}\n');
    const writing = setInterval(() => connection.writable && connection.write(' '), 100);
    cleanups.push(() => clearInterval(writing));
    expect(await closedByTheDaemon).toMatch(/^(EPIPE|ECONNRESET)$/);
    expect(JSON.parse(heard)).toMatchObject({ refused: { code: 'invalid_request' } });
  });

  it('refuses a caller past what all callers’ unfinished lines may hold at once, and then serves others', async () => {
    const server = await serve(async () => ALLOW);
    const held: Socket[] = [];
    cleanups.push(() => held.forEach((connection) => connection.destroy()));
    const line = 'x'.repeat(1_000_000);
    const refusals: string[] = [];
    // Each just under the cap of a line; 34 of them hold more than 32 Mi code units together.
    for (let caller = 0; caller < 34; caller++) {
      const connection = connect({ path: server.socketPath, allowHalfOpen: true });
      connection.setEncoding('utf8');
      connection.on('data', (chunk: string) => refusals.push(chunk));
      held.push(connection);
      await new Promise<void>((resolve) =>
        connection.write(`{"tool":"Read","pad":"${line}`, () => resolve()),
      );
    }
    await expect.poll(() => refusals.length).toBeGreaterThan(0);
    expect(JSON.parse(refusals[0]!)).toEqual({
      refused: {
        code: 'invalid_request',
        message: 'the daemon holds more unfinished requests than it reads at once',
      },
    });
    held.forEach((connection) => connection.destroy());
    await servedOnceLetGo(server);
  });

  /** Opens `count` connections that each say `text` (nothing if empty) and stay open. */
  const hold = async (socketPath: string, count: number, text: string): Promise<Socket[]> => {
    const held: Socket[] = [];
    cleanups.push(() => held.forEach((connection) => connection.destroy()));
    for (let caller = 0; caller < count; caller++) {
      const connection = connect(socketPath);
      held.push(connection);
      await new Promise<void>((resolve, reject) => connection.once('connect', resolve).once('error', reject));
      if (text) connection.write(text);
    }
    return held;
  };
  const watch = 'GET /v1/watch HTTP/1.1\r\nHost: latch\r\n\r\n';

  it('tells a caller past the 512 connections it holds that it is busy, and then serves others (review hb F3)', async () => {
    const server = await serve(async () => ALLOW);
    const held = await hold(server.socketPath, 512, '');
    await expect(
      gateCall({ tool: 'Read', paths: [] }, { socketPath: server.socketPath }),
    ).rejects.toMatchObject({
      code: 'daemon_unreachable',
      message: 'the daemon is busy (512 connections held)',
    });
    await expect(
      callDaemon('GET', '/v1/status', undefined, { socketPath: server.socketPath }),
    ).rejects.toMatchObject({
      code: 'daemon_unreachable',
      message: 'the daemon is busy (512 connections held)',
    });
    const heard = await converse(server.socketPath, 'GET /v1/status HTTP/1.1\r\nHost: latch\r\n\r\n', true);
    expect(heard).toMatch(/^HTTP\/1\.1 503/);
    expect(heard).toContain(
      JSON.stringify({
        error: { code: 'daemon_busy', message: 'the daemon is busy (512 connections held)' },
      }),
    );
    held.forEach((connection) => connection.destroy());
    await servedOnceLetGo(server);
  });

  it('holds at most 256 watchers, telling the next one it is busy, and still answers calls and status (reviews hb F3, rv7)', async () => {
    const server = await serve(async () => ALLOW);
    await hold(server.socketPath, 256, watch);
    const heard = await converse(server.socketPath, watch, true);
    expect(heard).toMatch(/^HTTP\/1\.1 503/);
    expect(heard).toContain(
      JSON.stringify({
        error: { code: 'daemon_busy', message: 'the daemon is busy (256 watch connections held)' },
      }),
    );
    // A run's watcher hears why, and that the daemon is busy rather than gone (runUnderSwitch).
    expect(await lostWatch(server.socketPath)).toEqual([
      'the daemon is busy (256 watch connections held)',
      true,
    ]);
    expect(await gateCall({ tool: 'Read', paths: [] }, { socketPath: server.socketPath })).toEqual(ALLOW);
    expect(await callDaemon('GET', '/v1/status', undefined, { socketPath: server.socketPath })).toEqual(
      STATUS,
    );
  });

  it('tells a run the watch is lost when a refusal of it never ends, or runs past a line, rather than waiting on it', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'latch-socket-'));
    cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
    mkdirSync(join(directory, 'run'), { mode: 0o700 });
    const socketPath = join(directory, 'run', 'daemon.sock');
    let body: 'trickles' | 'floods' = 'trickles';
    const connections = new Set<Socket>();
    const stranger = createServer((connection) => {
      connections.add(connection);
      connection.on('error', () => {});
      connection.once('data', () => {
        connection.write('HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n');
        if (body === 'floods') connection.write(`1400\r\n${'x'.repeat(0x1400)}\r\n`);
        else connection.write('1\r\n{\r\n');
      });
    });
    await new Promise<void>((resolve) => stranger.listen(socketPath, resolve));
    chmodSync(socketPath, 0o600);
    cleanups.push(() => {
      for (const connection of connections) connection.destroy();
      return new Promise((resolve) => stranger.close(resolve));
    });
    expect(await lostWatch(socketPath)).toEqual([
      'the daemon answered 503 to /v1/watch, and did not say why in time',
      false,
    ]);
    body = 'floods';
    expect(await lostWatch(socketPath)).toEqual([
      'the daemon answered 503 to /v1/watch, with more than a line',
      false,
    ]);
  });

  it('keeps places for status and panic that gate calls cannot take (review hb F3)', async () => {
    const server = await serve(() => new Promise<GateAnswer>(() => {}));
    // Calls that wait, as for a phone, and watchers: all of both budgets.
    await hold(server.socketPath, 224, '{"tool":"Bash","command":"rm -rf build"}\n');
    await hold(server.socketPath, 256, watch);
    await expect(
      gateCall({ tool: 'Read', paths: [] }, { socketPath: server.socketPath }),
    ).rejects.toMatchObject({
      code: 'daemon_unreachable',
      message: 'the daemon is busy (224 gate connections held)',
    });
    expect(await callDaemon('GET', '/v1/status', undefined, { socketPath: server.socketPath })).toEqual(
      STATUS,
    );
    await expect(
      callDaemon('POST', '/v1/panic', { reason: 'x' }, { socketPath: server.socketPath }),
    ).resolves.toEqual(STATUS);
  });

  it('refuses an input nested deeper than 64 levels before it is written out, and asks nothing', async () => {
    const asked: GateRequest[] = [];
    const server = await serve(async (call) => {
      asked.push(call);
      return ALLOW;
    });
    const nested = (depth: number): unknown => (depth === 0 ? 'x' : [nested(depth - 1)]);
    // 8 KB sent; indented, 32 MB to write out (seconds of the daemon's one thread).
    await expect(
      gateCall({ tool: 'deploy', input: nested(4000) }, { socketPath: server.socketPath }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'the daemon refused the request: the tool input is nested more than 64 levels deep',
    });
    expect(asked).toEqual([]);
    // 64 levels are taken, indented for the phone.
    await gateCall({ tool: 'deploy', input: nested(64) }, { socketPath: server.socketPath });
    expect(asked.map((call) => call.input?.split('\n').length)).toEqual([64 * 2 + 1]);
  });

  it('cuts a caller that sends lines nobody asked for, and hears it as gone', async () => {
    let gone: AbortSignal | undefined;
    const server = await serve(async (_call, conversation: Conversation) => {
      gone = conversation.gone;
      return new Promise<GateAnswer>(() => {});
    });
    const connection = connect(server.socketPath);
    cleanups.push(() => connection.destroy());
    const closed = new Promise((resolve) => connection.on('close', resolve));
    connection.write('{"tool":"Bash","command":"rm -rf build"}\n');
    await expect.poll(() => gone).toBeDefined();
    let heard = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => (heard += chunk));
    connection.write('{}\n{}\n{}\n');
    await closed;
    expect(gone!.aborted).toBe(true);
    // Told why before the connection closed.
    expect(JSON.parse(heard)).toEqual({
      refused: { code: 'invalid_request', message: 'more lines than a caller sends' },
    });
  });

  it('closes a connection that says nothing, or never finishes its HTTP head, after 10 s', async () => {
    let asked = 0;
    const server = await serve(async () => {
      asked += 1;
      return ALLOW;
    });
    const heardUntilClosed = (text: string) => {
      const connection = connect(server.socketPath);
      cleanups.push(() => connection.destroy());
      let heard = '';
      connection.setEncoding('utf8');
      connection.on('data', (chunk: string) => (heard += chunk));
      if (text) connection.write(text);
      return new Promise<string>((resolve) => connection.on('close', () => resolve(heard)));
    };
    const [silent, headless, gateCaller] = await Promise.all([
      heardUntilClosed(''),
      heardUntilClosed('GET /v1/status HTTP/1.1\r\nhost: latch\r\n'),
      heardUntilClosed('{"tool":"Read"'),
    ]);
    expect([silent, headless]).toEqual(['', '']);
    expect(JSON.parse(gateCaller)).toEqual({
      refused: { code: 'invalid_request', message: 'no whole line within 10 s' },
    });
    expect(asked).toBe(0);
  }, 30_000);

  it('closes an HTTP request whose body does not come within 10 s: it held its connection', async () => {
    const server = await serve(async () => ALLOW);
    const heard = await converse(
      server.socketPath,
      'POST /v1/panic HTTP/1.1\r\nHost: latch\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"reason":',
      true,
    );
    // Closed without an answer: the body never came whole.
    expect(heard).toBe('');
  }, 30_000);

  it('serves one HTTP request per connection, not a second sent behind it', async () => {
    const server = await serve(async () => ALLOW);
    const status = 'GET /v1/status HTTP/1.1\r\nHost: latch\r\n\r\n';
    const before = statusAsked;
    const heard = await converse(server.socketPath, `${status}${status}`, true);
    expect(heard.match(/^HTTP\/1\.1 200/gm)).toHaveLength(1);
    // Nor is the second one run, answered or not (a panic would be).
    expect(statusAsked - before).toBe(1);
  });

  it('says so when a caller closes its end before its line ends, at once', async () => {
    const server = await serve(async () => ALLOW);
    const connection = connect(server.socketPath);
    cleanups.push(() => connection.destroy());
    let heard = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => (heard += chunk));
    connection.end('{"tool":"Read"}');
    await new Promise((resolve) => connection.on('close', resolve));
    expect(JSON.parse(heard)).toEqual({
      refused: {
        code: 'invalid_request',
        message: 'the caller closed its end before the line ended (a newline)',
      },
    });
  });

  it('no longer takes the gate over HTTP', async () => {
    const server = await serve(async () => ALLOW);
    await expect(
      callDaemon('POST', '/v1/gate', { tool: 'Read' }, { socketPath: server.socketPath }),
    ).resolves.toEqual({ error: { code: 'not_found', message: 'no route POST /v1/gate' } });
  });

  it('hears a caller that closes its end before the answer as gone', async () => {
    let gone: AbortSignal | undefined;
    let answer!: (value: GateAnswer) => void;
    const server = await serve(async (_call, conversation: Conversation) => {
      gone = conversation.gone;
      return new Promise<GateAnswer>((resolve) => (answer = resolve));
    });
    const closed = converse(server.socketPath, '{"tool":"Bash","command":"rm -rf build"}\n');
    await expect.poll(() => gone).toBeDefined();
    await expect.poll(() => gone!.aborted).toBe(true);
    answer({ decision: 'deny', reason: 'caller gone', blockReason: 'denied' });
    await closed;
  });

  it('takes a fallback answer on the same connection, and a null as declined', async () => {
    const typed: (string | undefined)[] = [];
    const server = await serve(async (_call, conversation) => {
      const offer = {
        requestId: 'r1',
        method: 'totp' as const,
        reason: 'no phone',
        prompt: 'code:',
        exp: Date.now() + 60_000,
      };
      typed.push(await conversation.askOnTerminal!(offer));
      return { decision: 'deny', reason: 'declined', blockReason: 'fallback_failed' };
    });
    for (const answer of ['123456', undefined])
      await expect(
        gateCall({ tool: 'Bash' }, { socketPath: server.socketPath, onFallback: async () => answer }),
      ).resolves.toMatchObject({ decision: 'deny' });
    expect(typed).toEqual(['123456', undefined]);
  });
});
