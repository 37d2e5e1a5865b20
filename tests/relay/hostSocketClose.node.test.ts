import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';
import { RelayDriver } from '../support/relayDriver.ts';

/**
 * A daemon's WebSocket ending every way it can, against the relay as `npm start` runs it, whose
 * log shows what the fleet's object threw: a connection that drops must not be an error there.
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
