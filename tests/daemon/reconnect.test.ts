import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostEvent } from '../../shared/messages/events.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { withStore } from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

let paired: PairedDaemon;

beforeAll(async () => {
  paired = await startPairedDaemon();
});

afterAll(() => paired.stop());

const expiry = (requestId: string): HostEvent => ({
  v: PROTOCOL_VERSION,
  type: 'expired',
  requestId,
  at: Date.now(),
});
const storedCursor = () => withStore(paired.machine, (store) => Number(store.meta('cursor') ?? 0));

/** Drops the daemon's connection and resolves with the cursor it reconnects with. */
async function reconnect(): Promise<number> {
  const { relay } = paired;
  const seen = relay.cursors.length;
  relay.dropConnections();
  await relay.waitFor(() => relay.cursors.length > seen && relay.connected > 0);
  return relay.cursors.at(-1)!;
}

describe('the daemon’s cursor into the relay’s event log', () => {
  it('asks a relay it reconnects to for what it missed after the last frame it handled', async () => {
    paired.relay.send(expiry('long-gone'));
    paired.relay.send(expiry('long-gone-too'));
    await expect.poll(storedCursor).toBe(2);
    expect(await reconnect()).toBe(2);
  });

  it('follows a relay whose log is behind its cursor (reset, or it forged a number), so nothing later is lost', async () => {
    paired.relay.send(expiry('forged'), 1_000_000);
    await expect.poll(storedCursor).toBe(1_000_000);
    expect(await reconnect()).toBe(1_000_000);
    // That connection's state frame said the log ends at 2: the cursor follows the relay's log.
    await expect.poll(storedCursor).toBe(2);
    expect(await reconnect()).toBe(2);
  });
});

describe('the quorum the relay is told', () => {
  it('follows a quorum raised in config.toml while the daemon runs: it reconnects to tell the relay', async () => {
    const { relay, machine } = paired;
    expect(relay.quorums.at(-1)).toBe(1);
    const config = readFileSync(machine.files.config, 'utf8');
    writeFileSync(machine.files.config, config.replace(/^quorum = 1$/m, 'quorum = 2'));
    await expect.poll(() => relay.quorums.at(-1), { timeout: 10_000 }).toBe(2);
    await expect.poll(() => relay.connected).toBe(1);
  });
});

describe('a frame larger than any frame may be', () => {
  it('is refused as it arrives, unbuffered: the daemon drops the connection, comes back and goes on', async () => {
    const { relay } = paired;
    const seen = relay.cursors.length;
    relay.sendText(`{"v":1,"seq":3,"event":${JSON.stringify('x'.repeat(8 * 1024 * 1024))}}`);
    await relay.waitFor(() => relay.cursors.length > seen && relay.connected > 0);
    const next = relay.send(expiry('after-the-big-one'));
    await expect.poll(storedCursor).toBe(next);
  });
});

describe('a relay that accepts the connection and hangs up at once', () => {
  it('is redialled with a growing backoff, not at once each time, and reached again once it holds', async () => {
    const { relay } = paired;
    const seen = relay.cursors.length;
    relay.hangUpOnConnect = true;
    relay.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    relay.hangUpOnConnect = false;
    // Redialled at once after each, it came back 20 to 30 times in 3 s; backing off, a handful.
    expect(relay.cursors.length - seen).toBeLessThan(12);
    await expect.poll(() => relay.connected, { timeout: 20_000 }).toBe(1);
  });
});
