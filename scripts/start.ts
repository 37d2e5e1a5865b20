/**
 * `npm start`: the whole system on this machine, no Cloudflare account needed. Builds the CLI and
 * the PWA; makes local secrets once (git-ignored, mode 0600); runs the relay in workerd, its state
 * persisted; sets up a demo host (its own LATCH_HOME, so a real ~/.latch is untouched) and runs
 * its daemon; and, while no phone is paired, shows `latch pair`'s QR code. Ctrl-C stops it all.
 *
 *   LATCH_PORT         the relay's port (8787)
 *   LATCH_START_STATE  where the state lives (.latch in the repository)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ensureRelayEnvFile } from './lib/localSecrets.ts';
import { startRelay, stopProcessGroup } from './lib/relayProcess.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const STATE = process.env['LATCH_START_STATE'] ?? join(ROOT, '.latch');
const PORT = Number(process.env['LATCH_PORT'] ?? 8787);
const LATCH = join(ROOT, 'daemon/bin/latch.cjs');
const HOME = join(STATE, 'home');
// The demo host's socket lives in its home (XDG_RUNTIME_DIR unset), away from a real daemon's.
const demoEnv = { ...process.env, LATCH_HOME: HOME, XDG_RUNTIME_DIR: '' };
const latch = (args: string[]) =>
  spawnSync(process.execPath, [LATCH, ...args], { env: demoEnv, encoding: 'utf8' });

const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const { created } = ensureRelayEnvFile(join(STATE, 'relay.env'));
if (created) console.log(`made local VAPID keys in ${join(STATE, 'relay.env')} (mode 0600)`);

const relay = await startRelay({
  persistTo: join(STATE, 'relay'),
  envFile: join(STATE, 'relay.env'),
  port: PORT,
});
// WebAuthn needs a host name, not an IP address: the app and the daemon use localhost.
const appUrl = `http://localhost:${relay.port}`;

if (!existsSync(join(HOME, 'config.toml'))) {
  const init = latch(['init', '--relay', appUrl, '--name', hostname(), '--quorum', '1']);
  if (init.status !== 0) {
    console.error(init.stderr);
    await relay.stop();
    process.exit(1);
  }
  console.log(`set up a demo host in ${HOME} (quorum 1: one phone may resume after a freeze)`);
}

const daemon = spawn(process.execPath, [LATCH, 'daemon'], {
  env: demoEnv,
  stdio: ['ignore', 'inherit', 'inherit'],
  detached: true,
});
for (let tries = 0; latch(['status']).status === 2; tries++) {
  if (tries > 100 || daemon.exitCode !== null) {
    console.error('the daemon did not start');
    await relay.stop();
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}

console.log(`
Latch is running.
  the phone app:  ${appUrl}   (open it on this computer; a phone needs your relay on https, see docs/deploy.md)
  the relay:      workerd, state in ${join(STATE, 'relay')}
  the daemon:     LATCH_HOME=${HOME}
Use it from another terminal with:
  export LATCH_HOME=${HOME} XDG_RUNTIME_DIR=
  npx latch status
Ctrl-C stops everything.
`);

let pairing: ChildProcess | undefined;
if (latch(['devices']).stdout.startsWith('no phone is paired')) {
  pairing = spawn(process.execPath, [LATCH, 'pair'], {
    env: demoEnv,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping…');
  pairing?.kill('SIGTERM');
  await stopProcessGroup(daemon);
  await relay.stop();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
