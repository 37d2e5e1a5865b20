import { chmodSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { portInUse } from './portInUse.ts';
import { startProcessGroup, type ProcessGroup } from './processGroup.ts';
import { StartRefused } from './startRefused.ts';

export interface RelayProcess {
  origin: string;
  port: number;
  /** wrangler, and the workerd it runs: one process group. */
  group: ProcessGroup;
  stop(): Promise<void>;
}

const ROOT = new URL('../..', import.meta.url).pathname;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The environment wrangler needs to stay offline and keep its files inside the project. */
export function wranglerEnv(stateDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    XDG_CONFIG_HOME: join(stateDir, 'config'),
    WRANGLER_LOG_PATH: join(stateDir, 'logs'),
    FORCE_COLOR: '0',
  };
}

/**
 * The real relay, as `npm start` runs it: `wrangler dev` (workerd) on loopback, its Durable
 * Object state persisted under `persistTo` so that a restart keeps it. Secrets come from
 * `envFile` (see localSecrets.ts), never from the command line, where `ps` would show them.
 *
 * A port another process listens on is refused (StartRefused 'port_in_use'): else that process,
 * an orphaned workerd say, would answer our readiness check and pass for the relay we started.
 * On any failure, or when `signal` aborts, wrangler and its workerd are stopped before it throws.
 */
export async function startRelay(options: RelayOptions): Promise<RelayProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRelayOnce(options);
    } catch (error) {
      // A port found free here can be taken by another process before workerd binds it (test
      // files start relays side by side): tried again, on ports found free then.
      if (attempt === START_ATTEMPTS || !String(error).includes('Address already in use')) throw error;
    }
  }
}

/** How often a start that lost its port to another process is made. */
const START_ATTEMPTS = 3;

interface RelayOptions {
  persistTo: string;
  envFile: string;
  port?: number;
  /** Another wrangler config (a benchmark's baseline Worker); it must answer GET /. */
  config?: string;
  signal?: AbortSignal;
}

async function startRelayOnce(options: RelayOptions): Promise<RelayProcess> {
  const port = options.port ?? (await freePort());
  if (await portInUse(port))
    throw new StartRefused('port_in_use', `port ${port} is in use by a process that this did not start`);
  // The relay's storage holds pairing offers and push subscriptions: the user's alone, whatever
  // the umask or an earlier run left (workerd writes its files with the umask's modes).
  mkdirSync(options.persistTo, { recursive: true, mode: 0o700 });
  chmodSync(options.persistTo, 0o700);
  const group = startProcessGroup(
    join(ROOT, 'node_modules/.bin/wrangler'),
    [
      'dev',
      '--local',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      // Its own devtools port: two relays on the default 9229 refuse to start side by side.
      '--inspector-port',
      String(await freePort()),
      '--persist-to',
      options.persistTo,
      '--show-interactive-dev-session=false',
      '--env-file',
      options.envFile,
      // On this machine pushes go to a loopback stand-in (tests, a phone walk): a deployed relay
      // sends to browsers' push services alone (relay/push/pushServices.ts).
      '--var',
      'PUSH_SERVICE_HOSTS:127.0.0.1,localhost',
      ...(options.config ? ['--config', options.config] : []),
    ],
    {
      cwd: ROOT,
      env: wranglerEnv(join(options.persistTo, 'wrangler')),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // Only the tail, for a failed start's message: a relay that logs each of thousands of reset
  // WebSockets (bench/freezeFanout.ts at 10,000) outgrew the longest string Node can hold.
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-64 * 1024));
  group.child.stdout?.on('data', keep);
  group.child.stderr?.on('data', keep);
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitUntilServing(
      `${origin}${options.config ? '/' : '/v1/config'}`,
      group,
      () => output,
      options.signal,
    );
  } catch (error) {
    await group.stop();
    throw error;
  }
  return { origin, port, group, stop: () => group.stop() };
}

async function waitUntilServing(
  url: string,
  group: ProcessGroup,
  output: () => string,
  signal: AbortSignal | undefined,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    const { exitCode } = group.child;
    if (exitCode !== null) throw new Error(`wrangler dev exited with ${exitCode}:\n${output()}`);
    try {
      // A wrangler still starting may hold a request open: give up on it and ask again.
      const timeout = AbortSignal.timeout(2000);
      const response = await fetch(url, { signal: signal ? AbortSignal.any([timeout, signal]) : timeout });
      if (response.ok) return;
    } catch {
      // not listening yet (or aborted: thrown at the top of the loop)
    }
    await sleep(100);
  }
  throw new Error(`wrangler dev did not answer within ${timeoutMs} ms:\n${output()}`);
}
