import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_REFUSED_EXIT } from '../../daemon/cli/exitCodes.ts';
import {
  hookInput,
  initMachine,
  newMachine,
  runLatch,
  startHook,
  type LatchMachine,
} from '../support/latchMachine.ts';
import { StandInRelay } from '../support/standInRelay.ts';

/**
 * A socket path longer than sun_path allows (108 bytes on Linux) is refused where it is made and
 * said as it is where it is used: Node 20 bound a cut-short path outside the checked folder, Node
 * 24 failed with EINVAL, and clients said "no socket at" (review hb F4).
 */

let relay: StandInRelay;
let machine: LatchMachine;
/** The machine's environment with a runtime folder that makes the socket's path 130 bytes. */
let long: NodeJS.ProcessEnv;
let longSocket: string;
beforeAll(async () => {
  relay = await StandInRelay.start();
  machine = newMachine();
  await initMachine(machine, { relay: relay.origin });
  const runtime = join(machine.runtime, 'r'.repeat(110 - machine.runtime.length));
  mkdirSync(runtime, { mode: 0o700 });
  long = { XDG_RUNTIME_DIR: runtime };
  longSocket = join(runtime, 'latch', 'daemon.sock');
});
afterAll(() => relay.stop());

const tooLong = () =>
  `the socket path ${longSocket} is ${Buffer.byteLength(longSocket)} bytes; Unix sockets allow 108: use a shorter XDG_RUNTIME_DIR or LATCH_HOME`;

describe('a socket path past sun_path', () => {
  it('is taken at exactly 108 bytes, which Linux binds whole (review rv7)', async () => {
    const fresh = newMachine();
    // The runtime folder that makes `<it>/latch/daemon.sock` 108 bytes.
    const runtime = join(
      fresh.runtime,
      'r'.repeat(108 - '/latch/daemon.sock'.length - fresh.runtime.length - 1),
    );
    mkdirSync(runtime, { mode: 0o700 });
    expect(Buffer.byteLength(join(runtime, 'latch', 'daemon.sock'))).toBe(108);
    const init = await runLatch(fresh, ['init', '--relay', relay.origin, '--name', 'test-box'], {
      env: { XDG_RUNTIME_DIR: runtime },
    });
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
  });

  it('is refused by latch init before anything is written', async () => {
    const fresh = newMachine();
    const init = await runLatch(fresh, ['init', '--relay', relay.origin, '--name', 'test-box'], {
      env: { XDG_RUNTIME_DIR: long['XDG_RUNTIME_DIR'] },
    });
    expect(init.code).not.toBe(0);
    expect(init.stderr).toContain(tooLong());
    expect(existsSync(fresh.files.config)).toBe(false);
  });

  it('stops the daemon before it binds anything, with the lasting fault exit', async () => {
    const daemon = await runLatch(machine, ['daemon'], { env: long, timeoutMs: 15_000 });
    expect(daemon.code).toBe(DAEMON_REFUSED_EXIT);
    expect(daemon.stderr).toContain(tooLong());
    // No socket cut short beside the runtime folder, nor a folder made in it.
    expect(readdirSync(machine.runtime)).toEqual([long['XDG_RUNTIME_DIR']!.split('/').at(-1)]);
    expect(readdirSync(long['XDG_RUNTIME_DIR']!)).toEqual([]);
  });

  it('is named by latch status, latch doctor and the hook, not as a missing socket', async () => {
    const status = await runLatch(machine, ['status'], { env: long });
    expect([status.code, status.stdout]).toEqual([2, `unreachable: ${tooLong()}\n`]);
    const doctor = await runLatch(machine, ['doctor'], { env: long });
    expect(doctor.stdout).toContain(`✗ socket privacy: ${tooLong()}`);
    expect(doctor.stdout).toMatch(
      /fix: set XDG_RUNTIME_DIR \(or, without it, LATCH_HOME\) to a shorter folder/,
    );
    const hook = await startHook(
      machine,
      hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' }),
      30_000,
      {
        ...machine.env,
        ...long,
      },
    );
    expect(hook.output).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: 'deny',
        permissionDecisionReason: `latch: daemon_unreachable: ${tooLong()}`,
      },
    });
  });
});
