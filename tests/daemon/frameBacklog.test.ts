import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { KILL_SWITCH_POLICY, sendFreeze, signFreeze, statusCode, vote } from '../support/killSwitchRelay.ts';
import { runLatch } from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

/** The daemon's resident memory, in MB. */
const residentMb = (pid: number) =>
  Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

let paired: PairedDaemon;
beforeAll(async () => {
  paired = await startPairedDaemon({ quorum: 1, policy: KILL_SWITCH_POLICY });
});
afterAll(() => paired.stop());

describe('frames a relay sends faster than the daemon handles them', () => {
  it('wait at the relay, not in the daemon’s memory', { timeout: 120_000 }, async () => {
    const { relay, machine, daemon } = paired;
    const [phone] = paired.phones;
    const envelope = await signFreeze(machine, phone, 'incident');
    const freeze = await freezeId(envelope);
    sendFreeze(relay, envelope, 1);
    await expect.poll(() => statusCode(machine)).toBe(1);
    // Votes that pass every check but the signature's: each frame costs the daemon 32 of them.
    const genuine = await vote(machine, relay, phone, freeze);
    const signature = fromBase64url(genuine.assertion.signature);
    signature[signature.length - 1]! ^= 1;
    const spoiled: ResumeVote = {
      ...genuine,
      assertion: { ...genuine.assertion, signature: toBase64url(signature) },
    };
    const event = {
      v: PROTOCOL_VERSION,
      type: 'resumed',
      freeze,
      votes: Array<ResumeVote>(32).fill(spoiled),
    };
    const pid = daemon.child.pid!;
    const before = residentMb(pid);
    // About 90 MB of frames, sent at once.
    for (let seq = 100; seq < 5_100; seq++) {
      relay.sendText(JSON.stringify({ v: PROTOCOL_VERSION, seq, event: { ...event, at: Date.now() } }));
      if (seq % 500 === 0) await new Promise(setImmediate);
    }
    let most = before;
    for (let sample = 0; sample < 40; sample++) {
      most = Math.max(most, residentMb(pid));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(most - before).toBeLessThan(40);
    // And it still answers its callers.
    expect((await runLatch(machine, ['status'])).code).toBe(1);
  });
});
