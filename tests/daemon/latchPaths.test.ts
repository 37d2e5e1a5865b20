import { describe, expect, it } from 'vitest';
import { latchHome, socketPath } from '../../daemon/config/paths.ts';

describe("Latch's home and socket, from the environment", () => {
  it('takes LATCH_HOME and XDG_RUNTIME_DIR when they are set', () => {
    const env = { HOME: '/h', LATCH_HOME: '/data/latch', XDG_RUNTIME_DIR: '/run/user/7' };
    expect(latchHome(env)).toBe('/data/latch');
    expect(socketPath(env)).toBe('/run/user/7/latch/daemon.sock');
  });

  // Review Z: an empty LATCH_HOME put Latch's files, and the socket a hook asks, in whatever
  // folder the process ran in: the agent's project.
  it('reads an empty LATCH_HOME or XDG_RUNTIME_DIR as unset', () => {
    const env = { HOME: '/h', LATCH_HOME: '', XDG_RUNTIME_DIR: '' };
    expect(latchHome(env)).toBe('/h/.latch');
    expect(socketPath(env)).toBe('/h/.latch/run/daemon.sock');
  });
});
