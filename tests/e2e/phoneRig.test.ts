import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { portInUse } from '../../scripts/lib/portInUse.ts';
import { startPhoneRig } from '../support/phoneRig.ts';

const POLICY = `
default = "ask"
`;

/** The rig's state folders still on disk, by the name given to the rig. */
const stateFolders = (name: string) =>
  readdirSync(tmpdir()).filter((entry) => entry.startsWith(`latch-${name}-`));

describe('the phone rig the browser tests start', () => {
  it('stops what it had started when a later step of its start fails, and reports that failure', async () => {
    let relayPort: number | undefined;
    const start = startPhoneRig({
      name: 'rig-failing-start',
      relay: 'plain',
      policy: POLICY,
      // The host's set-up, after the relay and the push service are up: the config names the relay.
      config: (text) => {
        relayPort = Number(/^url = "http:\/\/localhost:(\d+)"$/m.exec(text)![1]);
        throw new Error('a host set-up that fails');
      },
    });
    await expect(start).rejects.toThrow('a host set-up that fails');
    expect(relayPort).toBeGreaterThan(0);
    expect(await portInUse(relayPort!)).toBe(false);
    expect(stateFolders('rig-failing-start')).toEqual([]);
  });

  it('stops everything on stop, even past a part that fails to stop, and reports that failure', async () => {
    const rig = await startPhoneRig({ name: 'rig-failing-stop', relay: 'plain', policy: POLICY });
    const closePush = rig.push.close;
    rig.push.close = () => Promise.reject(new Error('the push service would not close'));
    try {
      const stopped = rig.stop();
      await expect(stopped).rejects.toThrow('the phone rig did not stop cleanly');
      await expect(stopped.catch((error: AggregateError) => error.errors)).resolves.toEqual([
        new Error('the push service would not close'),
      ]);
      expect(rig.daemon.child.exitCode ?? rig.daemon.child.signalCode).not.toBeNull();
      // Started before the push service, so stopped after its failure.
      expect(await portInUse(rig.relay.port)).toBe(false);
      expect(stateFolders('rig-failing-stop')).toEqual([]);
    } finally {
      await closePush();
    }
  });
});
