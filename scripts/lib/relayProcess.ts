import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface RelayProcess {
  origin: string;
  port: number;
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
 */
export async function startRelay(options: {
  persistTo: string;
  envFile: string;
  port?: number;
  /** Another wrangler config (a benchmark's baseline Worker); it must answer GET /. */
  config?: string;
}): Promise<RelayProcess> {
  const port = options.port ?? (await freePort());
  mkdirSync(options.persistTo, { recursive: true });
  const child = spawn(
    join(ROOT, 'node_modules/.bin/wrangler'),
    [
      'dev',
      '--local',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--persist-to',
      options.persistTo,
      '--show-interactive-dev-session=false',
      '--env-file',
      options.envFile,
      ...(options.config ? ['--config', options.config] : []),
    ],
    {
      cwd: ROOT,
      env: wranglerEnv(join(options.persistTo, 'wrangler')),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const origin = `http://127.0.0.1:${port}`;
  await waitUntilServing(`${origin}${options.config ? '/' : '/v1/config'}`, child, () => output);
  return { origin, port, stop: () => stopProcessGroup(child) };
}

async function waitUntilServing(
  url: string,
  child: ChildProcess,
  output: () => string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}:\n${output()}`);
    try {
      // A wrangler still starting may hold a request open: give up on it and ask again.
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopProcessGroup(child);
  throw new Error(`wrangler dev did not answer within ${timeoutMs} ms:\n${output()}`);
}

/** Stops wrangler and the workerd it started (one process group), and waits for the exit. */
export async function stopProcessGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timeout = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 5000);
  await exited;
  clearTimeout(timeout);
}
