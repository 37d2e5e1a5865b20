import { AGENT_HOOKS, type Agent } from '../../install/agents.ts';
import { settingsPath } from '../../install/settingsPath.ts';
import { withoutLatchHooks } from '../../install/withoutLatchHooks.ts';
import { writeSettings } from '../../install/writeSettings.ts';
import { readSettingsOrFail } from '../agentSettings.ts';
import { fail } from '../home.ts';

/** `latch uninstall <agent> [--project]`: takes Latch's hooks, and only them, out of the agent's settings. */
export async function run(agent: Agent, options: { project?: boolean }): Promise<void> {
  const { title, events } = AGENT_HOOKS[agent];
  const path = settingsPath(agent, options.project ? 'project' : 'user');
  const current = readSettingsOrFail(path, events);
  const { settings, removed } = withoutLatchHooks(current.settings);
  if (removed === 0) {
    process.stdout.write(`No Latch hook in ${path}: nothing to remove.\n`);
    return;
  }
  try {
    writeSettings(path, settings, current.text);
  } catch (error) {
    fail(`cannot write ${path}: ${(error as Error).message}`, 1);
  }
  process.stdout.write(
    `Removed ${removed} Latch hook${removed === 1 ? '' : 's'} from ${path}; every other hook and setting is as it was.\n` +
      `${title} no longer asks Latch through this file; latch doctor shows any other.\n`,
  );
}
