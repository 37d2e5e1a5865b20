import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { KILL_SWITCH_POLICY, sendVotes, statusCode, vote } from '../support/killSwitchRelay.ts';
import { auditLines, hookInput, runLatch, startHook, withStore } from '../support/latchMachine.ts';
import { framesHandled, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

/**
 * A panic the relay answers as not taken is told again once the relay answers: once, not once for
 * each state frame a relay sends, and never after the freeze it made has ended here.
 */
let paired: PairedDaemon;
beforeEach(async () => {
  paired = await startPairedDaemon({ quorum: 1, policy: KILL_SWITCH_POLICY });
  // The relay takes every freeze, and answers that the fleet is not frozen.
  paired.relay.answerFreeze = (state) => ({ ...state, frozen: false, freeze: undefined });
});
afterEach(() => paired.stop());

const sendStates = (count: number) => {
  for (let sent = 0; sent < count; sent++)
    paired.relay.send({
      v: PROTOCOL_VERSION,
      type: 'state',
      state: { ...paired.relay.state, frozen: false, freeze: undefined },
    });
};

describe('a panic the relay said it did not take', () => {
  it('is told again once for many state frames, not with a new freeze for each', async () => {
    const { machine, relay } = paired;
    expect((await runLatch(machine, ['panic', 'incident'])).code).toBe(1);
    const freezes = () =>
      withStore(
        machine,
        (store) => (store.db.prepare('SELECT COUNT(*) AS n FROM freezes').get() as { n: number }).n,
      );
    const before = { freezes: freezes(), told: relay.freezes.length };
    sendStates(30);
    await framesHandled(machine, relay);
    expect(freezes() - before.freezes).toBe(1);
    expect(relay.freezes.length - before.told).toBe(1);
  });

  it('is not brought back once the phones resumed it', async () => {
    const { machine, relay } = paired;
    const [phone] = paired.phones;
    expect((await runLatch(machine, ['panic', 'incident'])).code).toBe(1);
    // The relay did show the phones this freeze: the person votes to resume it.
    const id = await freezeId(relay.freezes.at(-1)!);
    sendVotes(relay, id, [await vote(machine, relay, phone, id)]);
    await expect.poll(() => statusCode(machine)).toBe(0);
    sendStates(1);
    await framesHandled(machine, relay);
    expect(await statusCode(machine)).toBe(0);
    expect(
      auditLines(machine).filter((line) => line['via'] === 'told late: the relay was out of reach'),
    ).toEqual([]);
  });
});

describe('a panic made by latch panic itself, where it found no daemon to ask', () => {
  it('refuses the call waiting for a phone once the daemon reads the freeze (review rv2)', async () => {
    const { machine, relay } = paired;
    const waiting = startHook(machine, hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' }));
    await relay.nextRequest();
    // A terminal whose runtime folder names no socket: the CLI freezes this host's state itself.
    const elsewhere = mkdtempSync(join(tmpdir(), 'latch-no-daemon-'));
    const panicked = await runLatch(machine, ['panic', 'incident'], { env: { XDG_RUNTIME_DIR: elsewhere } });
    expect(panicked.stdout).toContain('froze');
    // The next call reads it: refused, and so is the call that was waiting.
    const next = await runLatch(machine, ['hook', 'claude-code'], {
      input: hookInput('PreToolUse', 'Bash', { command: 'rm -rf dist' }),
    });
    expect({ code: next.code, stderr: next.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('kill_switch'),
    });
    expect((await waiting).output).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringContaining('kill_switch'),
      },
    });
  });
});
