import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../config/config.ts';
import { latchFiles, latchHome, socketPath } from '../../config/paths.ts';
import { AGENT_HOOKS, type Agent } from '../../install/agents.ts';
import { codexHookShellCheck } from '../../install/codexHookShellCheck.ts';
import { hookCommand } from '../../install/hookCommand.ts';
import { neededHookTimeout } from '../../install/neededHookTimeout.ts';
import { settingsPath } from '../../install/settingsPath.ts';
import { withLatchHooks } from '../../install/withLatchHooks.ts';
import { writeSettings } from '../../install/writeSettings.ts';
import { parsePolicy, PolicyError } from '../../policy/policy.ts';
import { callDaemon } from '../../socket/daemonClient.ts';
import { readSettingsOrFail } from '../agentSettings.ts';
import { fail } from '../home.ts';

/** What a person does once the hooks are written: the agents load them differently. */
const NEXT: Record<Agent, { user: string; project: string }> = {
  'claude-code': {
    user: 'Next: start a new Claude Code session (/hooks lists what it runs), then run latch doctor.',
    project:
      'This file is often committed, and the command holds this machine’s paths.\n' +
      'Next: start a new Claude Code session here (/hooks lists what it runs), then run latch doctor.',
  },
  codex: {
    user: 'Next: Codex runs a new or changed hook only once you trust it: open /hooks in Codex and trust Latch’s. Then run latch doctor.',
    project:
      'Codex reads a project’s hooks only in a project you trust, and a new or changed hook only once you trust it.\n' +
      'Next: open /hooks in Codex here and trust Latch’s. Then run latch doctor.',
  },
};

/** `latch install <agent> [--project]`: writes Latch's hooks into the agent's settings. */
export async function run(agent: Agent, options: { project?: boolean }): Promise<void> {
  const files = latchFiles(latchHome());
  let needed: ReturnType<typeof neededHookTimeout>;
  try {
    needed = neededHookTimeout(loadConfig(files.config), parsePolicy(readFileSync(files.policy, 'utf8')));
  } catch (error) {
    if (error instanceof ConfigError && error.code === 'config_missing')
      fail('Latch is not set up on this machine: run latch init first', 1);
    const where = error instanceof PolicyError ? `${files.policy}: ` : '';
    fail(`${where}${(error as Error).message}; the hook’s timeout depends on it`, 1);
  }

  const { title, events } = AGENT_HOOKS[agent];
  const scope = options.project ? 'project' : 'user';
  const path = settingsPath(agent, scope);
  const command = hookCommand(agent, needed.timeout);
  const current = readSettingsOrFail(path, events);
  const settings = withLatchHooks(current.settings, events, {
    type: 'command',
    command,
    timeout: needed.timeout,
  });
  const changed = JSON.stringify(settings) !== JSON.stringify(current.settings);
  if (changed) {
    try {
      writeSettings(path, settings, current.text);
    } catch (error) {
      fail(`cannot write ${path}: ${(error as Error).message}`, 1);
    }
  }
  process.stdout.write(
    `${changed ? 'Wrote' : 'Already there, unchanged:'} Latch’s hook for ${events.join(' and ')} (matcher "*") in ${path}\n` +
      `  command  ${command}\n` +
      `  timeout  ${needed.timeout} s: a phone may take up to ${needed.longestWait} s here, and the hook answers before ${title} would stop it\n` +
      `Every other hook and setting in the file is as it was.\n` +
      `${NEXT[agent][scope]}\n`,
  );
  // Written all the same: the fault is in the login files, and doctor names it until it is fixed.
  const shell = agent === 'codex' ? await codexHookShellCheck([command]) : undefined;
  if (shell && !shell.ok) process.stdout.write(`Warning: ${shell.detail}\n  fix: ${shell.fix}\n`);
  // The command names this shell's socket (hookEnvironment): a daemon started in another
  // environment (a systemd unit's runtime folder) would never be asked, and every call denied.
  try {
    await callDaemon('GET', '/v1/status', undefined, { timeoutMs: 2000 });
  } catch {
    process.stdout.write(
      `Note: no daemon answers at ${socketPath()} now, the one socket the hook asks: start it with latch daemon here, ` +
        'or run latch install again where your daemon runs (its XDG_RUNTIME_DIR and LATCH_HOME).\n',
    );
  }
}
