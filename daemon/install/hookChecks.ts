import { existsSync } from 'node:fs';
import { AGENT_DEFAULT_HOOK_TIMEOUT_SECONDS } from '../hooks/hookDeadline.ts';
import type { Check } from '../output/check.ts';
import { AGENT_HOOKS, AGENTS, type Agent } from './agents.ts';
import { codexHookShellCheck } from './codexHookShellCheck.ts';
import { findLatchHooks, type FoundHook } from './findLatchHooks.ts';
import { hookCommand } from './hookCommand.ts';
import { parseHookCommand } from './parseHookCommand.ts';
import { readSettings, SettingsError } from './readSettings.ts';
import { agentConfigDir, settingsPath, type SettingsScope } from './settingsPath.ts';
import { startProblem } from './startProblem.ts';

type Located = FoundHook & { path: string; scope: SettingsScope };
type Needed = { timeout: number; longestWait: number };

/** Why a hook's `timeout` would cut a phone short, or let the agent kill the hook before it answers. */
function timeoutProblem(hook: Located, needed: Needed): string | undefined {
  if (hook.timeout !== undefined && typeof hook.timeout !== 'number')
    return `timeout ${JSON.stringify(hook.timeout)} is not a number of seconds`;
  const killsAt = typeof hook.timeout === 'number' ? hook.timeout : AGENT_DEFAULT_HOOK_TIMEOUT_SECONDS;
  const counted = parseHookCommand(hook.command)!.timeoutSeconds;
  const answersBy = counted ?? AGENT_DEFAULT_HOOK_TIMEOUT_SECONDS;
  if (answersBy > killsAt)
    return `the agent stops it at ${killsAt} s, but it counts on ${answersBy} s: a later answer is lost, and the tool runs`;
  if (answersBy < needed.timeout)
    return `${answersBy} s${hook.timeout === undefined && counted === undefined ? ' (no timeout: the agent’s default)' : ''}, less than the ${needed.timeout} s a phone may need here (waits of up to ${needed.longestWait} s)`;
  return undefined;
}

/** One check over every Latch hook found: each failing hook named with its event and file. */
function everyHook(
  name: string,
  agent: Agent,
  hooks: readonly Located[],
  problemOf: (hook: Located) => string | undefined,
  passing: string,
  fixNote: string,
): Check {
  const failing = hooks.flatMap((hook) => {
    const problem = problemOf(hook);
    return problem ? [{ hook, problem }] : [];
  });
  if (failing.length === 0) return { name, ok: true, detail: passing };
  const scopes = new Set(failing.map(({ hook }) => hook.scope));
  return {
    name,
    ok: false,
    detail: failing.map(({ hook, problem }) => `${hook.event} in ${hook.path}: ${problem}`).join('; '),
    fix: `${[...scopes].map((scope) => `latch install ${agent}${scope === 'project' ? ' --project' : ''}`).join(' and ')} (${fixNote})`,
  };
}

/**
 * `latch doctor`'s checks of the agents' hooks, for each agent whose configuration folder exists
 * or whose settings the current project has: that Latch's hook is there for every event it
 * answers, that its command starts without help from PATH, that Codex's login shell runs it
 * (codexHookShellCheck), and that its `timeout` covers the longest wait for a phone (`needed`;
 * unknown while the config or policy is broken).
 */
export async function hookChecks(needed: Needed | undefined): Promise<Check[]> {
  const checks: Check[] = [];
  for (const agent of AGENTS) {
    const { title, events } = AGENT_HOOKS[agent];
    const sources: { path: string; scope: SettingsScope }[] = [];
    if (existsSync(agentConfigDir(agent))) sources.push({ path: settingsPath(agent, 'user'), scope: 'user' });
    const project = settingsPath(agent, 'project');
    if (existsSync(project) && !sources.some((source) => source.path === project))
      sources.push({ path: project, scope: 'project' });
    if (sources.length === 0) continue;

    // The agent merges the hooks of all its settings files, so one file's hook covers the others.
    const found: Located[] = [];
    const unreadable: string[] = [];
    for (const source of sources) {
      try {
        const { settings } = readSettings(source.path, events);
        found.push(...findLatchHooks(settings).map((hook) => ({ ...hook, ...source })));
      } catch (error) {
        if (!(error instanceof SettingsError)) throw error;
        unreadable.push(error.message);
      }
    }
    const missing = events.filter((event) => !found.some((hook) => hook.event === event));
    const name = `${title} hooks`;
    checks.push(
      unreadable.length > 0
        ? { name, ok: false, detail: unreadable.join('; '), fix: `fix the file, then latch install ${agent}` }
        : missing.length > 0
          ? {
              name,
              ok: false,
              detail: `no Latch hook for ${missing.join(', ')} in ${sources.map((source) => source.path).join(' or ')}: ${title} does not ask Latch`,
              fix: `latch install ${agent}`,
            }
          : {
              name,
              ok: true,
              detail: `${events.join(', ')} in ${[...new Set(found.map((hook) => hook.path))].join(' and ')}`,
            },
    );
    if (found.length === 0) continue;

    checks.push(
      everyHook(
        `${title} hook command`,
        agent,
        found,
        (hook) => startProblem(parseHookCommand(hook.command)!),
        `starts without PATH: ${found[0]!.command}`,
        'it writes the absolute paths of this Node and of Latch, the environment the hook runs in, and the failsafe',
      ),
    );
    if (agent === 'codex') {
      // Only the command this Latch writes is run: a project's settings could name any program.
      const own = found.flatMap(({ command }) => {
        const timeout = parseHookCommand(command)!.timeoutSeconds;
        return timeout !== undefined && command === hookCommand(agent, timeout) ? [command] : [];
      });
      checks.push(await codexHookShellCheck([...new Set(own)]));
    }
    if (needed)
      checks.push(
        everyHook(
          `${title} hook timeout`,
          agent,
          found,
          (hook) => timeoutProblem(hook, needed),
          `covers waits for a phone of up to ${needed.longestWait} s`,
          `it writes timeout ${needed.timeout}`,
        ),
      );
  }
  return checks;
}
