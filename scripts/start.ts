/**
 * `npm start`: the whole system on this machine, no Cloudflare account needed. Builds the CLI and
 * the PWA, makes local secrets once (under .latch/, git-ignored, mode 0600), and runs the relay in
 * workerd with its state persisted under .latch/relay. Ctrl-C stops everything.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureRelayEnvFile } from './lib/localSecrets.ts';
import { startRelay } from './lib/relayProcess.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const STATE = join(ROOT, '.latch');
const PORT = Number(process.env['LATCH_PORT'] ?? 8787);

const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const { created } = ensureRelayEnvFile(join(STATE, 'relay.env'));
if (created) console.log('made local VAPID keys in .latch/relay.env (mode 0600)');

const relay = await startRelay({
  persistTo: join(STATE, 'relay'),
  envFile: join(STATE, 'relay.env'),
  port: PORT,
});
const appUrl = `http://localhost:${relay.port}`;
console.log(`\nLatch relay running in workerd: ${appUrl}`);
console.log(`Open ${appUrl} on this computer for the phone app. Ctrl-C stops.`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping…');
  await relay.stop();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
