import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The user's home folder: `$HOME` of the environment given, else `os.homedir()`. On Linux and
 * macOS `os.homedir()` returns `$HOME` when it is set, so users see no difference; reading the
 * given env lets a test (or a worker thread, whose env is its own) name a home of its own.
 */
export function homeFolder(env: NodeJS.ProcessEnv = process.env): string {
  return env['HOME'] || homedir();
}

/**
 * Where Latch keeps its files: `$LATCH_HOME`, or `~/.latch`. An empty `LATCH_HOME=` is unset, as
 * for HOME: taken as it is, it would put them in whatever folder the process runs in.
 */
export function latchHome(env: NodeJS.ProcessEnv = process.env): string {
  return env['LATCH_HOME'] || join(homeFolder(env), '.latch');
}

/**
 * The daemon's socket: `$XDG_RUNTIME_DIR/latch/daemon.sock` (a per-user tmpfs that systemd
 * makes 0700), else `~/.latch/run/daemon.sock`.
 */
export function socketPath(env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env['XDG_RUNTIME_DIR'];
  return runtime ? join(runtime, 'latch', 'daemon.sock') : join(latchHome(env), 'run', 'daemon.sock');
}

export function latchFiles(home: string) {
  return {
    config: join(home, 'config.toml'),
    policy: join(home, 'policy.toml'),
    hostKey: join(home, 'host-key.json'),
    hostToken: join(home, 'host-token'),
    totp: join(home, 'totp.json'),
    state: join(home, 'state.db'),
    audit: join(home, 'audit.log'),
    /** `latch relay deploy`'s: the wrangler config it runs, and the relay Worker's VAPID keys. */
    relayConfig: join(home, 'relay', 'wrangler.json'),
    relaySecrets: join(home, 'relay', 'relay-secrets.json'),
  };
}

export type LatchFiles = ReturnType<typeof latchFiles>;

/**
 * Why Latch is not set up for this user, or undefined once `latch init` has run (cheap: a hook
 * asks this on every call). A home it may not read is said apart from one never made.
 */
export function notSetUp(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const { config } = latchFiles(latchHome(env));
  try {
    accessSync(config, constants.F_OK);
    return undefined;
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    return code === 'ENOENT'
      ? 'Latch is not set up on this machine; run latch init'
      : `Latch cannot reach ${config} (${code}): check the modes of its folders`;
  }
}
