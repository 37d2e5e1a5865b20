import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { EXEC_DENIED } from '../../daemon/cli/commands/exec.ts';
import { freezeId } from '../../shared/kill-switch/freezeId.ts';
import { runLatch, startDaemon, type LatchMachine, type RunningDaemon } from '../support/latchMachine.ts';
import { signFreeze, sendFreeze, sendVotes, vote } from '../support/killSwitchRelay.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { execCgroupsOf, isHeld, killAll, processesRunning } from '../support/processes.ts';
import { LATCH_BIN } from '../support/latchCli.ts';

const POLICY = `
default = "ask"
[[rule]]
name = "what these tests run"
tool = "exec"
command = ["sleep *", "sh *", "/nonexistent/*"]
action = "allow"
`;

/** Room for spawned processes on a busy machine: a bound on waiting, never a measure of speed. */
const PATIENCE = { timeout: 10_000 };

/** Where latch exec finds what it started: both ways, whatever this machine offers by default. */
const WAYS: [string, NodeJS.ProcessEnv][] = [
  ['in a cgroup of its own where this machine allows one', {}],
  ['followed through /proc', { LATCH_EXEC_CGROUP: 'off' }],
];

interface ExecRun {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<number | null>;
}

let paired: PairedDaemon | undefined;
/** The daemon running now: a test may restart it. */
let daemon: RunningDaemon | undefined;
const runs: ExecRun[] = [];
const sleeps: string[] = [];

afterEach(async () => {
  // latch exec told to stop ends what it started; SIGKILL for one that does not.
  for (const run of runs.splice(0)) {
    if (run.child.exitCode !== null || run.child.signalCode !== null) continue;
    run.child.kill('SIGTERM');
    await Promise.race([run.exited, sleep(PATIENCE.timeout)]);
    run.child.kill('SIGKILL');
  }
  for (const seconds of sleeps.splice(0)) killAll(processesRunning('sleep', seconds));
  await daemon?.stop();
  await paired?.stop();
  paired = daemon = undefined;
});

async function setUp(config?: (text: string) => string): Promise<PairedDaemon> {
  paired = await startPairedDaemon({ policy: POLICY, ...(config ? { config } : {}) });
  daemon = paired.daemon;
  return paired;
}

/** A duration no other process here sleeps: how a test finds its own sleepers, and only them. */
function uniqueSleep(): string {
  const seconds = `1000.${randomInt(1e9)}`;
  sleeps.push(seconds);
  return seconds;
}

/** The pids of these sleeps, once each has started. */
async function sleepers(...durations: string[]): Promise<number[]> {
  await expect
    .poll(() => durations.every((seconds) => processesRunning('sleep', seconds).length === 1), PATIENCE)
    .toBe(true);
  return durations.map((seconds) => processesRunning('sleep', seconds)[0]!);
}

function startExec(machine: LatchMachine, argv: string[], env: NodeJS.ProcessEnv = {}): ExecRun {
  const child = spawn(process.execPath, [LATCH_BIN, 'exec', '--', ...argv], {
    env: { ...machine.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const run = {
    child,
    stderr: () => stderr,
    exited: new Promise<number | null>((resolve) => child.on('exit', resolve)),
  };
  runs.push(run);
  return run;
}

/** The panic button on the phone, through the relay. Resolves with the freeze's id. */
async function freezeFromPhone({ machine, relay, phones: [phone] }: PairedDaemon, reason: string) {
  const envelope = await signFreeze(machine, phone!, reason);
  sendFreeze(relay, envelope, 1);
  return freezeId(envelope);
}

/** The phone's vote to end that freeze (quorum 1), through the relay. */
async function resumeFromPhone({ machine, relay, phones: [phone] }: PairedDaemon, freeze: string) {
  sendVotes(relay, freeze, [await vote(machine, relay, phone!, freeze)]);
}

/** Stops the daemon, runs `meanwhile`, starts it again and waits until it is back on the relay. */
async function restartDaemon({ machine, relay }: PairedDaemon, meanwhile?: () => Promise<void>) {
  const connections = relay.cursors.length;
  await daemon!.stop();
  await meanwhile?.();
  daemon = await startDaemon(machine);
  await relay.waitFor(() => relay.cursors.length > connections);
}

describe('latch exec', () => {
  it("exits with the command's own code, 128 + the number of the signal that ended it, or 127", async () => {
    const { machine } = await setUp();
    expect((await runLatch(machine, ['exec', '--', 'sh', '-c', 'exit 7'])).code).toBe(7);
    const signalled = await runLatch(machine, ['exec', '--', 'sh', '-c', 'kill -USR1 $$']);
    expect(signalled.code).toBe(128 + constants.signals.SIGUSR1);
    expect(await runLatch(machine, ['exec', '--', '/nonexistent/command'])).toMatchObject({
      code: 127,
      stderr: expect.stringMatching(/^latch: cannot run \/nonexistent\/command: /m),
    });
  });

  it(`exits ${EXEC_DENIED} without running a command whose arguments are not UTF-8, which Node would have rewritten`, async () => {
    const { machine } = await setUp();
    const run = (argument: string) =>
      spawnSync(
        'sh',
        ['-c', `exec "$0" "$1" exec -- sh -c 'exit 7' ${argument}`, process.execPath, LATCH_BIN],
        { env: machine.env, encoding: 'utf8' },
      );
    for (const argument of [`"$(printf 'x\\377y')"`, `'x\u{FFFD}y'`]) {
      const refused = run(argument);
      expect(refused.status).toBe(EXEC_DENIED);
      expect(refused.stderr).toMatch(
        /^latch: not running sh -c .*: an argument is not UTF-8 \(or holds U\+FFFD\), and would not run as given\n$/,
      );
    }
    expect(run(`'x\u{E9}y'`).status).toBe(7);
  });

  it('judges the program it runs: a first argument with `=` is a program, never read as an assignment', async () => {
    // A rule for sh run with X=1 in its environment, as a shell reads `X=1 sh …`.
    const policy = POLICY.replace('default = "ask"', 'default = "deny"').replace('"sh *"', '"X=1 sh *"');
    paired = await startPairedDaemon({ policy });
    daemon = paired.daemon;
    const { machine } = paired;
    // spawn runs the program named `X=1`; a shell would read `X=1 sh …` as running sh.
    const bin = join(machine.env['HOME']!, 'bin');
    mkdirSync(bin, { recursive: true });
    const marker = join(bin, 'ran');
    writeFileSync(join(bin, 'X=1'), `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 });
    const run = await runLatch(machine, ['exec', '--', 'X=1', 'sh', '-c', 'exit 7'], {
      env: { PATH: `${bin}:${process.env['PATH']}` },
    });
    expect(run.code).toBe(EXEC_DENIED);
    expect(run.stderr).toMatch(/^latch: not running 'X=1' sh -c 'exit 7': /);
    expect(existsSync(marker)).toBe(false);
  });

  it(`exits ${EXEC_DENIED} with the reason on stderr, the command never run, when the daemon dies while a phone is asked`, async () => {
    const setup = await setUp();
    const witness = join(setup.machine.home, 'the-command-ran');
    const run = startExec(setup.machine, ['touch', witness]);
    await setup.relay.nextRequest(0);
    await expect.poll(run.stderr, PATIENCE).toMatch(/waiting for your phone/);
    daemon!.child.kill('SIGKILL');

    expect(await run.exited).toBe(EXEC_DENIED);
    await expect.poll(run.stderr, PATIENCE).toMatch(/^latch: not running touch \S+: \S/m);
    expect(existsSync(witness)).toBe(false);
  });

  it('stops the command on a freeze that comes after a daemon restart, and continues it on resume', async () => {
    const setup = await setUp();
    const seconds = uniqueSleep();
    const run = startExec(setup.machine, ['sleep', seconds]);
    const [sleeper] = await sleepers(seconds);

    await restartDaemon(setup);
    const freeze = await freezeFromPhone(setup, 'after the restart');
    await expect.poll(() => isHeld(sleeper!), PATIENCE).toBe(true);
    await expect.poll(run.stderr, PATIENCE).toMatch(/lost the daemon[^]*the daemon is back/);

    await resumeFromPhone(setup, freeze);
    await expect.poll(() => isHeld(sleeper!), PATIENCE).toBe(false);
    expect(processesRunning('sleep', seconds)).toEqual([sleeper]);

    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(128 + constants.signals.SIGTERM);
    expect(processesRunning('sleep', seconds)).toEqual([]);
  });

  it('applies a freeze made while it could not reach the daemon as soon as the daemon is back', async () => {
    const setup = await setUp();
    const seconds = uniqueSleep();
    const run = startExec(setup.machine, ['sleep', seconds]);
    const [sleeper] = await sleepers(seconds);
    const outages = () => run.stderr().match(/lost the daemon/g)?.length ?? 0;

    // While latch exec says it lost the daemon, the freeze is one it cannot have seen: `latch
    // panic` with the daemon down freezes the host in state.db, which the daemon reads at start.
    await restartDaemon(setup, async () => {
      await expect.poll(outages, PATIENCE).toBe(1);
      const panic = await runLatch(setup.machine, ['panic', 'frozen while exec was away']);
      expect(panic.stdout).toMatch(/^frozen: /);
    });
    await expect.poll(() => isHeld(sleeper!), PATIENCE).toBe(true);
    await expect.poll(run.stderr, PATIENCE).toMatch(/the fleet is frozen \(frozen while exec was away\)/);
  });

  it.each(WAYS)(
    'stops and continues children that call setsid or double-fork away (%s), and leaves nothing behind',
    async (_, env) => {
      const setup = await setUp();
      const [setsid, doubleFork] = [uniqueSleep(), uniqueSleep()];
      const run = startExec(
        setup.machine,
        ['sh', '-c', `setsid sleep ${setsid} & setsid sh -c 'sleep ${doubleFork} &'; wait`],
        env,
      );
      const pids = await sleepers(setsid, doubleFork);

      const freeze = await freezeFromPhone(setup, 'setsid');
      await expect.poll(() => pids.every(isHeld), PATIENCE).toBe(true);
      await resumeFromPhone(setup, freeze);
      await expect.poll(() => pids.some(isHeld), PATIENCE).toBe(false);

      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(128 + constants.signals.SIGTERM);
      expect([...processesRunning('sleep', setsid), ...processesRunning('sleep', doubleFork)]).toEqual([]);
      expect(execCgroupsOf(run.child.pid!)).toEqual([]);
    },
  );

  it.each([
    ...WAYS.map(([way, env]): [string, string, NodeJS.ProcessEnv] => [`kills (${way})`, '-KILL', env]),
    ['stops', '-STOP', {}],
  ])(
    'holds through a freeze a command that %s its own latch exec, and continues it on resume (review sd)',
    async (_, signal, env) => {
      const setup = await setUp();
      const seconds = uniqueSleep();
      startExec(setup.machine, ['sh', '-c', `kill ${signal} $PPID; sleep ${seconds}`], env);
      // A `kill` of a pid only running tells may reach the daemon: Latch asks a phone.
      const shown = await setup.relay.nextRequest(0);
      setup.relay.sendApproval(
        shown.requestId,
        (await phoneApproves(setup.phones[0]!, shown, setup.relay.origin)).token,
      );
      const [sleeper] = await sleepers(seconds);

      const freeze = await freezeFromPhone(setup, 'its latch exec is gone');
      await expect.poll(() => isHeld(sleeper!), PATIENCE).toBe(true);
      await resumeFromPhone(setup, freeze);
      await expect.poll(() => isHeld(sleeper!), PATIENCE).toBe(false);
    },
  );

  it('holds a child that moved itself out of the command’s cgroup, and what it thaws, and ends it with the run', async () => {
    const setup = await setUp();
    const [plain, escaped] = [uniqueSleep(), uniqueSleep()];
    const mount =
      readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .map((line) => line.split(' '))
        .find((fields) => fields[fields.indexOf('-') + 1] === 'cgroup2')?.[4] ?? '/sys/fs/cgroup';
    // Into the parent cgroup (this user may write it), then thawing the one it left, again and again.
    // Where the control groups are comes from the environment, as a program started before would
    // know it: a command line that writes a control group's file asks a phone first (self-protection,
    // docs/policy.md), and this test is about what latch exec holds once it runs.
    const escape = [
      `p=$(sed -n 's/^0:://p' /proc/self/cgroup)`,
      `echo $$ > $CGROUPS$(dirname $p)/cgroup.procs`,
      `sleep ${escaped} & while :; do echo 0 > $CGROUPS$p/cgroup.freeze; sleep 0.1; done 2>/dev/null`,
    ].join('; ');
    const run = startExec(setup.machine, ['sh', '-c', `sh -c '${escape}' & sleep ${plain} & wait`], {
      CGROUPS: mount,
    });
    const pids = await sleepers(plain, escaped);

    const freeze = await freezeFromPhone(setup, 'escape');
    await expect.poll(() => pids.every(isHeld), PATIENCE).toBe(true);
    // Past several of the thawing loop's turns, had it gone on.
    await sleep(1500);
    expect(pids.map(isHeld)).toEqual([true, true]);
    await resumeFromPhone(setup, freeze);
    await expect.poll(() => pids.some(isHeld), PATIENCE).toBe(false);

    run.child.kill('SIGTERM');
    await run.exited;
    expect([...processesRunning('sleep', plain), ...processesRunning('sleep', escaped)]).toEqual([]);
  });

  it.each(WAYS)(
    'terminates children that call setsid or double-fork away (%s) with on_freeze = "terminate"',
    async (_, env) => {
      const setup = await setUp((text) => text.replace('on_freeze = "stop"', 'on_freeze = "terminate"'));
      const [setsid, doubleFork] = [uniqueSleep(), uniqueSleep()];
      const run = startExec(
        setup.machine,
        ['sh', '-c', `setsid sleep ${setsid} & setsid sh -c 'sleep ${doubleFork} &'; wait`],
        env,
      );
      await sleepers(setsid, doubleFork);

      await freezeFromPhone(setup, 'terminate');
      expect(await run.exited).toBe(128 + constants.signals.SIGTERM);
      expect([...processesRunning('sleep', setsid), ...processesRunning('sleep', doubleFork)]).toEqual([]);
      expect(execCgroupsOf(run.child.pid!)).toEqual([]);
      await expect.poll(run.stderr, PATIENCE).toMatch(/the fleet is frozen \(terminate\); terminating/);
    },
  );

  it('obeys the kill-switch rules in force at the daemon, not a loosening of the config file no phone approved', async () => {
    const setup = await setUp((text) => text.replace('on_freeze = "stop"', 'on_freeze = "terminate"'));
    const { machine } = setup;
    writeFileSync(
      machine.files.config,
      readFileSync(machine.files.config, 'utf8').replace('on_freeze = "terminate"', 'on_freeze = "stop"'),
    );
    const seconds = uniqueSleep();
    const run = startExec(machine, ['sleep', seconds]);
    await sleepers(seconds);
    expect(JSON.parse((await runLatch(machine, ['status', '--json'])).stdout)).toMatchObject({
      config: 'loosening_pending',
    });

    await freezeFromPhone(setup, 'terminate all the same');
    expect(await run.exited).toBe(128 + constants.signals.SIGTERM);
    expect(processesRunning('sleep', seconds)).toEqual([]);
    await expect
      .poll(run.stderr, PATIENCE)
      .toMatch(/the fleet is frozen \(terminate all the same\); terminating/);
  });

  it('in strict mode, stops the command once the daemon has been away for grace_seconds, and continues it when the daemon is back unfrozen', async () => {
    const setup = await setUp((text) =>
      text.replace('strict = false', 'strict = true').replace('grace_seconds = 120', 'grace_seconds = 2'),
    );
    const seconds = uniqueSleep();
    const run = startExec(setup.machine, ['sleep', seconds]);
    const [sleeper] = await sleepers(seconds);

    await restartDaemon(setup, async () => {
      await expect.poll(() => isHeld(sleeper!), PATIENCE).toBe(true);
      await expect
        .poll(run.stderr, PATIENCE)
        .toMatch(/the daemon has been out of reach for 2 s \(strict mode\); stopping/);
    });
    // The daemon's first word on reconnecting, "not frozen", continues it: as a resume it missed would.
    await expect.poll(() => isHeld(sleeper!), PATIENCE).toBe(false);
    await expect
      .poll(run.stderr, PATIENCE)
      .toMatch(/the daemon is back\n.*the fleet is not frozen; continuing sleep/);
  });
});
