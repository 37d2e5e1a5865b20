import { join } from 'node:path';
import { homeFolder } from '../config/paths.ts';
import type { Agent } from './agents.ts';

/** User settings apply to every project; project settings to the current directory's. */
export type SettingsScope = 'user' | 'project';

/** Where the agent keeps its user configuration: `$CLAUDE_CONFIG_DIR` or `$CODEX_HOME`, else `~/.claude` or `~/.codex`. */
export function agentConfigDir(agent: Agent, env: NodeJS.ProcessEnv = process.env): string {
  const override = env[agent === 'claude-code' ? 'CLAUDE_CONFIG_DIR' : 'CODEX_HOME'];
  return override || join(homeFolder(env), agent === 'claude-code' ? '.claude' : '.codex');
}

/** The file that holds the agent's hooks: Claude Code's `settings.json`, Codex's `hooks.json`. */
export function settingsPath(
  agent: Agent,
  scope: SettingsScope,
  where: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): string {
  const file = agent === 'claude-code' ? 'settings.json' : 'hooks.json';
  if (scope === 'user') return join(agentConfigDir(agent, where.env), file);
  return join(where.cwd ?? process.cwd(), agent === 'claude-code' ? '.claude' : '.codex', file);
}
