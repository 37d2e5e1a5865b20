import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * The real relay, serving its own copy of the built app (`<state>/pwa`, copied from dist/pwa)
 * so that a test can ship a new version of it, and so that a build running meanwhile cannot
 * change the app under a test.
 */
export async function startRelayServingAppCopy(
  state: string,
  port?: number,
): Promise<{ relay: RelayProcess; app: string }> {
  const app = join(state, 'pwa');
  cpSync(join(ROOT, 'dist/pwa'), app, { recursive: true });
  const config = join(state, 'wrangler.toml');
  writeFileSync(
    config,
    readFileSync(join(ROOT, 'wrangler.toml'), 'utf8')
      .replace('main = "relay/index.ts"', `main = "${join(ROOT, 'relay/index.ts')}"`)
      .replace('directory = "dist/pwa"', `directory = "${app}"`),
  );
  const envFile = join(state, 'relay.env');
  ensureRelayEnvFile(envFile);
  const relay = await startRelay({
    persistTo: join(state, 'relay'),
    envFile,
    config,
    ...(port ? { port } : {}),
  });
  return { relay, app };
}
