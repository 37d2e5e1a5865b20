import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../daemon/fallback/totp.ts';
import { callDaemon } from '../../daemon/socket/daemonClient.ts';
import { gateCall } from '../../daemon/socket/gateClient.ts';
import type { DaemonStatus } from '../../daemon/socket/localApi.ts';
import {
  initMachine,
  newMachine,
  pairPhoneDirectly,
  startDaemon,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';

/**
 * Latch's own files as the same-user agent may leave them, outside any gate: a FIFO in place of
 * the config or the policy (which a synchronous read would wait on for good, the daemon's thread
 * with it), and a TOTP secret file with an empty secret (a code anyone computes).
 */
const UNREACHABLE = 'http://127.0.0.1:9';
let machine: LatchMachine;
let daemon: RunningDaemon;

beforeAll(async () => {
  machine = newMachine();
  await initMachine(machine, {
    relay: UNREACHABLE,
    config: (text) => text.replace('mode = "none"', 'mode = "totp"'),
  });
  await pairPhoneDirectly(machine, UNREACHABLE);
  daemon = await startDaemon(machine);
});

afterAll(() => daemon.stop());

const call = (answer?: string) =>
  gateCall(
    { agent: 'test', tool: 'deploy', title: 'deploy to prod', interactive: true, canDefer: false },
    { socketPath: machine.socket, onFallback: async () => answer },
  );

describe('a file of Latch’s that is not what Latch wrote', () => {
  it('refuses a TOTP secret file with an empty secret: its code is anyone’s', async () => {
    writeFileSync(machine.files.totp, `${JSON.stringify({ secret: '' })}\n`, { mode: 0o600 });
    const code = totpCode(new Uint8Array(0), Math.floor(Date.now() / 30_000));
    expect(await call(code)).toMatchObject({
      decision: 'deny',
      blockReason: 'fallback_failed',
      reason: 'the TOTP secret file is not the one a phone approved (latch pair --totp)',
    });
  });

  it('denies while a FIFO stands in place of the config or the policy, and the daemon keeps answering', async () => {
    for (const file of [machine.files.config, machine.files.policy]) {
      const kept = execFileSync('cat', [file]);
      rmSync(file);
      execFileSync('mkfifo', ['-m', '600', file]);
      expect(await call()).toMatchObject({
        decision: 'deny',
        reason: expect.stringContaining(`${file} is not a regular file`),
      });
      const status = await callDaemon<DaemonStatus>('GET', '/v1/status', undefined, {
        socketPath: machine.socket,
      });
      expect(status.frozen).toBe(false);
      rmSync(file);
      writeFileSync(file, kept, { mode: 0o600 });
    }
  });
});
