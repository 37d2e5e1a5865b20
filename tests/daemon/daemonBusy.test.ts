import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { askHook, hookInput, runLatch } from '../support/latchMachine.ts';

/**
 * A daemon that holds all the connections it takes says it is busy, and every door reports that,
 * not a socket error or "not running" (review hb F3): each still denies.
 */

let paired: PairedDaemon;
beforeAll(async () => {
  paired = await startPairedDaemon();
});
afterAll(() => paired.stop());

/** All 512 places, taken by connections that say nothing (each is closed after 10 s). */
async function holdEveryPlace(): Promise<void> {
  const held: Socket[] = [];
  onTestFinished(() => held.forEach((connection) => connection.destroy()));
  for (let caller = 0; caller < 512; caller++) {
    const connection = connect(paired.machine.socket);
    held.push(connection);
    await new Promise<void>((resolve, reject) => connection.once('connect', resolve).once('error', reject));
  }
}

const busy = 'the daemon is busy (512 connections held)';

describe('a daemon that holds all its connections', () => {
  it('is reported busy by latch status, which exits as unreachable', async () => {
    await holdEveryPlace();
    const status = await runLatch(paired.machine, ['status']);
    expect([status.code, status.stdout]).toEqual([2, `unreachable: ${busy}\n`]);
  });

  it('is reported busy by the hook, which denies', async () => {
    await holdEveryPlace();
    const answer = await askHook(
      paired.machine,
      hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' }),
    );
    expect(answer).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringContaining(`daemon_unreachable: ${busy}`),
    });
  });

  it('is named by latch panic, which freezes from the terminal', async () => {
    await holdEveryPlace();
    const panic = await runLatch(paired.machine, ['panic', 'flood'], { timeoutMs: 30_000 });
    expect(panic.stdout).toBe(`frozen: the fleet is frozen (${busy})\n`);
  });
});
