/** Hosts for `latch install`, `uninstall` and `doctor`, and the hooks `latch install` writes. */
import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { HOOK_FAILSAFE, HOOK_LAUNCHER, hookEnvironment } from '../../daemon/install/hookCommand.ts';
import { shellQuote } from '../../daemon/install/shellWords.ts';
import { initMachine, newMachine, runLatch, type LatchMachine, type Ran } from './latchMachine.ts';
import { LATCH_BIN } from './latchCli.ts';

export const LATCH_SCRIPT = realpathSync(LATCH_BIN);
// Nothing listens on the discard port: doctor's relay check fails at once.
const NO_RELAY = 'http://127.0.0.1:9';

/** What `latch install` writes on a host, for the default config and policy (a 300 s wait, plus 15 s). */
export const latchHandler = (host: Host, agent: 'claude-code' | 'codex', timeout = 315) => ({
  type: 'command',
  command: [
    HOOK_LAUNCHER,
    ...hookEnvironment(host.machine.env).map(shellQuote),
    `${shellQuote(process.execPath)} ${shellQuote(LATCH_SCRIPT)} hook ${agent} --timeout ${timeout} ${HOOK_FAILSAFE}`,
  ].join(' '),
  timeout,
});
export const latchGroup = (host: Host, agent: 'claude-code' | 'codex', timeout = 315) => ({
  matcher: '*',
  hooks: [latchHandler(host, agent, timeout)],
});

/** A machine set up with `latch init`, and an empty user folder, agent folders and project, all in a temp dir. */
export interface Host {
  machine: LatchMachine;
  user: string;
  claude: string;
  codex: string;
  project: string;
  run(args: string[], env?: NodeJS.ProcessEnv): Promise<Ran>;
}

export async function newHost(options: { policy?: string; init?: boolean } = {}): Promise<Host> {
  const machine = newMachine();
  if (options.init !== false)
    await initMachine(machine, { relay: NO_RELAY, ...(options.policy ? { policy: options.policy } : {}) });
  const root = dirname(machine.home);
  const host = {
    machine,
    user: machine.env['HOME']!,
    claude: join(root, 'claude'),
    codex: join(root, 'codex'),
    project: join(root, 'project'),
  };
  mkdirSync(host.project);
  // Made here, not by whatever runs first: fish makes its config folder in it, but not every
  // machine has fish.
  mkdirSync(host.user, { recursive: true });
  machine.env = { ...machine.env, CLAUDE_CONFIG_DIR: host.claude, CODEX_HOME: host.codex };
  return {
    ...host,
    run: (args, env) => runLatch(machine, args, { cwd: host.project, ...(env ? { env } : {}) }),
  };
}

export const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
