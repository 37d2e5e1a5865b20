import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { RelayClient } from '../../daemon/relay/relayClient.ts';
import { httpCall, MAX_ANSWER_BYTES } from '../../daemon/relay/httpCall.ts';

/** A relay that answers whatever the test sets, over real HTTP. */
let answer: { status: number; body: string };
let connections = 0;
let server: Server;
let client: RelayClient;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () =>
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body),
    );
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  client = new RelayClient(`http://127.0.0.1:${port}`, 'fleet-1', () => 'token');
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

const state = { v: 1, fleet: 'fleet-1', frozen: false, epoch: 0, votes: [], needed: 1 };

describe('the daemon’s calls to the relay', () => {
  it('refuses an answer over 1 MiB without reading it all', async () => {
    answer = { status: 200, body: `"${'x'.repeat(MAX_ANSWER_BYTES)}"` };
    expect(await client.state()).toMatchObject({
      ok: false,
      failure: { kind: 'refused', code: 'answer_too_large' },
    });
  });

  it('refuses a malformed answer, and counts a 5xx as unreachable', async () => {
    answer = { status: 200, body: '{"frozen": "yes"' };
    expect(await client.state()).toMatchObject({
      ok: false,
      failure: { kind: 'refused', code: 'malformed_json' },
    });
    answer = { status: 503, body: '' };
    expect(await client.state()).toMatchObject({ ok: false, failure: { kind: 'unreachable' } });
  });

  it('passes on the relay’s error code when Latch publishes it, and never the relay’s message', async () => {
    answer = {
      status: 409,
      body: JSON.stringify({ error: { code: 'already_decided', message: 'too late' } }),
    };
    expect(await client.state()).toEqual({
      ok: false,
      failure: {
        kind: 'refused',
        status: 409,
        code: 'already_decided',
        message: 'the relay refused it (HTTP 409, already_decided)',
      },
    });
    // A code of the relay's own making is no code: words a relay wrote would reach agents.
    answer = {
      status: 403,
      body: JSON.stringify({ error: { code: 'run_latch_uninstall', message: 'run latch uninstall' } }),
    };
    expect(await client.state()).toEqual({
      ok: false,
      failure: {
        kind: 'refused',
        status: 403,
        code: 'refused',
        message: 'the relay refused it (HTTP 403, refused)',
      },
    });
  });

  it('reuses one connection for successive calls', async () => {
    answer = { status: 200, body: JSON.stringify(state) };
    const before = connections;
    for (let i = 0; i < 5; i++) expect((await client.state()).ok).toBe(true);
    expect(connections - before).toBeLessThanOrEqual(1);
  });

  it('reports a relay that is not there as unreachable', async () => {
    const gone = new RelayClient('http://127.0.0.1:1', 'fleet-1', () => undefined);
    expect(await gone.state()).toEqual({
      ok: false,
      failure: { kind: 'unreachable', code: 'relay_unreachable', message: 'ECONNREFUSED' },
    });
  });
});

describe('a relay that answers a byte at a time', () => {
  it('is out of reach once the call’s deadline passes, however steadily the bytes come', async () => {
    const trickle = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => response.write(' '), 100);
      response.on('close', () => clearInterval(drip));
    });
    await new Promise<void>((resolve) => trickle.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => {
      trickle.closeAllConnections();
      return new Promise<void>((resolve) => trickle.close(() => resolve()));
    });
    const { port } = trickle.address() as { port: number };
    await expect(
      httpCall(new URL(`http://127.0.0.1:${port}/v1/fleets/fleet-1/state`), {
        method: 'GET',
        headers: {},
        timeoutMs: 1000,
      }),
    ).rejects.toThrow('no answer within 1 s');
  });
});
