import { expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../daemon/config/config.ts';
import { configTemplate } from '../../daemon/config/configTemplate.ts';

const withQuorum = (quorum: number) =>
  parseConfig(
    configTemplate({ relayUrl: 'https://latch.example.com', hostName: 'box', fleet: 'fleet-1', quorum }),
    'config.toml',
    {},
  );

it('takes a quorum up to the most phones a fleet holds; one above, from an older config, counts as all of them', () => {
  expect(withQuorum(16).killSwitch.quorum).toBe(16);
  // `latch init` took up to 32 once: such a host still starts, and pairs.
  expect(withQuorum(17).killSwitch.quorum).toBe(16);
  expect(withQuorum(32).killSwitch.quorum).toBe(16);
  for (const quorum of [0, 33]) {
    expect(() => withQuorum(quorum)).toThrow(ConfigError);
    expect(() => withQuorum(quorum)).toThrow(/kill_switch\.quorum must be a whole number from 1 to 16/);
  }
});
