import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';
import { RelayDriver } from '../support/relayDriver.ts';

/**
 * Connections ending every way they can (a daemon's WebSocket, a request whose body stops
 * part-way), against the relay as `npm start` runs it, whose log shows what the Worker and the
 * fleet's object threw: a connection that drops must not be an error there.
 */

const persistTo = mkdtempSync(join(tmpdir(), 'latch-relay-'));
let relay: RelayProcess | undefined;
let log = '';
beforeAll(async () => {
  const envFile = join(persistTo, 'relay.env');
  ensureRelayEnvFile(envFile);
  relay = await startRelay({ persistTo, envFile });
  relay.group.child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  relay.group.child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
}, 90_000);
afterAll(async () => {
  await relay?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

type Ending = (socket: WebSocket) => void;

/** Connects as the fleet's daemon, waits for its first frame, ends the connection, and returns the close code it saw. */
async function connectAndEnd(url: string, hostToken: string, end: Ending): Promise<number> {
  const socket = new WebSocket(url, {
    headers: { authorization: `Bearer ${hostToken}` },
    perMessageDeflate: false,
  });
  const closed = new Promise<number>((resolve) => socket.once('close', resolve));
  await new Promise<void>((resolve, reject) => {
    socket.once('message', () => resolve());
    socket.once('error', reject);
  });
  end(socket);
  return closed;
}

describe("a daemon's WebSocket ending", () => {
  it('is answered without an error in the relay, however it ends', async () => {
    const driver = new RelayDriver(relay!.origin, (url, init) => fetch(url, init));
    const fleet = await driver.newFleet({ push: false });
    const url = `${relay!.origin.replace('http', 'ws')}/v1/fleets/${fleet.fleet}/connect`;
    const endings: [string, Ending, number][] = [
      ['a close frame with a code', (socket) => socket.close(4000, 'bye'), 4000],
      ['a close frame without one', (socket) => socket.close(), 1000],
      ['the connection dropped', (socket) => socket.terminate(), 1006],
    ];
    for (const [, end, code] of endings) expect(await connectAndEnd(url, fleet.hostToken, end)).toBe(code);
    // The object's handler runs after the daemon's side has closed: give it time to log.
    await sleep(1000);
    expect(log).not.toMatch(/Uncaught|ERROR/);
    const afterwards = await connectAndEnd(url, fleet.hostToken, (socket) => socket.close(1000));
    expect(afterwards).toBe(1000);
  });
});

describe('a request whose body stops part-way', () => {
  it('is the client’s fault, not a relay error', async () => {
    const driver = new RelayDriver(relay!.origin, (url, init) => fetch(url, init));
    const fleet = await driver.newFleet({ push: false });
    const { host, hostname, port } = new URL(relay!.origin);
    const from = log.length;
    // Part of the body its length promised, then the connection is gone.
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(
      `POST /v1/fleets/${fleet.fleet}/freeze HTTP/1.1\r\nHost: ${host}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{"v":1,',
    );
    await sleep(1000);
    socket.destroy();
    await sleep(1500);
    // Answered as the client's fault (which no one reads), not as a fault of the relay's. (Under
    // `wrangler dev` its proxy logs the lost connection itself: a 503 and "Network connection lost".)
    expect(log.slice(from)).toMatch(/POST \/v1\/fleets\/[^ ]+\/freeze \d{3}/);
    expect(log.slice(from)).not.toMatch(/relay error/);
  });
});
