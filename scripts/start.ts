/**
 * `npm start`: the whole system on this machine, no Cloudflare account needed. Builds the CLI and
 * the PWA; makes local secrets once (git-ignored, mode 0600); runs the relay in workerd, its state
 * persisted; sets up a demo host (its own LATCH_HOME, so a real ~/.latch is untouched) and runs
 * its daemon; and, while no phone is paired, shows `latch pair`'s QR code.
 *
 * Ctrl-C, SIGTERM and SIGHUP stop all of it, as does the end of whoever launched it, or of the
 * pipe it writes to: every process it starts runs in a process group of its own (processGroup.ts),
 * stopped whole, with SIGKILL for what ignores SIGTERM (workerd). A failure part-way stops what
 * was started so far. It starts only what it can call its own: a second `npm start` for the same
 * state, a port another process listens on, a daemon already serving the demo host are refused in
 * one line, exit code 1.
 *
 *   LATCH_PORT         the relay's port (8787)
 *   LATCH_START_STATE  where the state lives (.latch in the repository)
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureRelayEnvFile } from './lib/localSecrets.ts';
import { onLauncherGone } from './lib/onLauncherGone.ts';
import { portInUse } from './lib/portInUse.ts';
import { startProcessGroup, type ProcessGroup } from './lib/processGroup.ts';
import { startRelay } from './lib/relayProcess.ts';
import { takeStartLock } from './lib/startLock.ts';
import { StartRefused } from './lib/startRefused.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const STATE = process.env['LATCH_START_STATE'] ?? join(ROOT, '.latch');
const PORT = Number(process.env['LATCH_PORT'] ?? 8787);
const LATCH = join(ROOT, 'daemon/bin/latch.cjs');
const HOME = join(STATE, 'home');
// The demo host's socket lives in its home (XDG_RUNTIME_DIR unset), away from a real daemon's.
const demoEnv = { ...process.env, LATCH_HOME: HOME, XDG_RUNTIME_DIR: '' };
const latch = (args: string[]) =>
  spawnSync(process.execPath, [LATCH, ...args], { env: demoEnv, encoding: 'utf8' });

/** Why the run ends before its time: a signal, passed on as we exit, or an event. */
type StopReason = { signal: NodeJS.Signals } | { event: string };

const stopping = new AbortController();
const stop = (reason: StopReason) => {
  if (!stopping.signal.aborted) stopping.abort(reason);
};
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const onSignal = (signal: NodeJS.Signals) => stop({ signal });
for (const signal of SIGNALS) process.on(signal, onSignal);
onLauncherGone(() => stop({ event: 'what launched npm start has ended' }));
// A reader that went away (`npm start | tee log`, and tee took the Ctrl-C first) makes our next
// write fail with EPIPE (Node ignores SIGPIPE). Unhandled, that error would end this process on the
// spot and orphan everything it started: it ends the run instead, through the same clean-up.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', () => stop({ event: 'its output was closed' }));
let crash: unknown;
const crashed = (error: unknown) => {
  crash ??= error;
  stop({ event: 'it failed' });
};
process.on('uncaughtException', crashed);
process.on('unhandledRejection', crashed);

/** Everything this run started, stopped in the reverse order; then the lock is let go. */
const started: ProcessGroup[] = [];
let releaseLock = () => {};

async function run(): Promise<void> {
  mkdirSync(STATE, { recursive: true, mode: 0o700 });
  chmodSync(STATE, 0o700); // one left wider (an earlier run, a umask of 000) holds the relay's storage
  // Ours is running when the lock in the state directory names a live process (pid and start time,
  // checked in /proc), so a lock left by a crash does not block. A foreign listener on the port is
  // found by a probe (portInUse): we never take over a relay or daemon that another run left.
  const lock = takeStartLock(join(STATE, 'start.pid'));
  if (!lock.taken)
    throw new StartRefused(
      'already_running',
      `npm start is already running for ${STATE} (pid ${lock.holder}); stop it with Ctrl-C in its terminal`,
    );
  releaseLock = lock.release;
  if (await portInUse(PORT))
    throw new StartRefused(
      'port_in_use',
      `port ${PORT} is in use by another process; stop it, or use another port: LATCH_PORT=${PORT + 3} npm start`,
    );

  const build = startProcessGroup('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  started.push(build);
  const [built] = (await once(build.child, 'exit', { signal: stopping.signal })) as [number | null];
  if (built !== 0) throw new Error(`the build failed (exit code ${built})`);

  const { created } = ensureRelayEnvFile(join(STATE, 'relay.env'));
  if (created) console.log(`made local VAPID keys in ${join(STATE, 'relay.env')} (mode 0600)`);

  const relay = await startRelay({
    persistTo: join(STATE, 'relay'),
    envFile: join(STATE, 'relay.env'),
    port: PORT,
    signal: stopping.signal,
  });
  started.push(relay.group);
  endsTheRun(relay.group.child, 'the relay (wrangler dev)');
  // WebAuthn needs a host name, not an IP address: the app and the daemon use localhost.
  const appUrl = `http://localhost:${relay.port}`;

  if (!existsSync(join(HOME, 'config.toml'))) {
    const init = latch(['init', '--relay', appUrl, '--name', hostname(), '--quorum', '1']);
    if (init.status !== 0) throw new Error(`latch init failed: ${init.stderr.trim()}`);
    console.log(`set up a demo host in ${HOME} (quorum 1: one phone may resume after a freeze)`);
  }

  if (daemonAnswers())
    throw new StartRefused(
      'daemon_running',
      `a latch daemon that this did not start already serves ${HOME}; stop it, then run npm start again`,
    );
  const daemon = startProcessGroup(process.execPath, [LATCH, 'daemon'], {
    env: demoEnv,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  started.push(daemon);
  for (let tries = 0; !daemonAnswers(); tries++) {
    if (tries > 100 || daemon.child.exitCode !== null) throw new Error('the daemon did not start');
    await sleep(100, undefined, { signal: stopping.signal });
  }
  endsTheRun(daemon.child, 'the daemon');

  console.log(`
Latch is running.
  the phone app:  ${appUrl}   (open it on this computer; a phone needs your relay on https, see docs/deploy.md)
  the relay:      workerd, state in ${join(STATE, 'relay')}
  the daemon:     LATCH_HOME=${HOME}
Use it from another terminal with:
  export LATCH_HOME=${HOME} XDG_RUNTIME_DIR=
  alias latch=${LATCH}
  latch status
Ctrl-C stops everything.
`);

  if (latch(['devices']).stdout.startsWith('no phone is paired')) {
    started.push(
      startProcessGroup(process.execPath, [LATCH, 'pair'], {
        env: demoEnv,
        stdio: ['ignore', 'inherit', 'inherit'],
      }),
    );
  }
  await once(stopping.signal, 'abort');
}

/** Whether a daemon answers on the demo host's socket: `latch status` says armed (0) or frozen (1). */
function daemonAnswers(): boolean {
  const { status } = latch(['status']);
  return status === 0 || status === 1;
}

/** The relay and the daemon run until we stop them: if one ends first, the rest is stopped too. */
function endsTheRun(child: ChildProcess, name: string): void {
  child.once('exit', () => stop({ event: `${name} ended` }));
}

let exitCode = 0;
try {
  await run();
} catch (error) {
  // Once stopping, what fails (an abort, a wrangler we killed) is part of the stop.
  if (error instanceof StartRefused || !stopping.signal.aborted) {
    console.error(`npm start: ${error instanceof Error ? error.message : String(error)}`);
    exitCode = 1;
  }
}
const reason = stopping.signal.reason as StopReason | undefined;
if (crash !== undefined) console.error('npm start failed:', crash);
else if (reason && started.length > 0)
  console.log(`\nstopping${'event' in reason ? ` (${reason.event})` : ''}…`);
for (const group of started.reverse()) await group.stop();
releaseLock();
if (reason && 'signal' in reason && exitCode === 0) {
  // Ended by a signal, as the shell that launched us should see it (`npm start && …` goes no further).
  for (const signal of SIGNALS) process.off(signal, onSignal);
  process.kill(process.pid, reason.signal);
}
// Anything else that ends the run early (a failure, a part that ended, a launcher gone) is exit 1.
process.exit(reason && 'event' in reason ? 1 : exitCode);
