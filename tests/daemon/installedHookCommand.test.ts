import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hookInput, type Ran } from '../support/latchMachine.ts';
import { newHost, readJson } from '../support/agentHooks.ts';
import { runToEnd } from '../support/processes.ts';

/** Runs an agent's hook command the way agents do (`sh -c`), with no PATH at all. */
function runAsAgent(command: string, input: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return runToEnd(['/bin/sh', '-c', command], { env: { ...env, PATH: '' }, input });
}

describe('the command latch install writes', () => {
  it('answers an explicit deny with no PATH and no daemon, where a bare latch exits 127', async () => {
    const host = await newHost();
    await host.run(['install', 'claude-code']);
    await host.run(['install', 'codex']);
    const claude = readJson(join(host.claude, 'settings.json')) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    const codex = readJson(join(host.codex, 'hooks.json')) as typeof claude;
    const risky = hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' });

    const bare = await runAsAgent('latch hook claude-code', risky, host.machine.env);
    expect(bare.code).toBe(127);

    const pre = await runAsAgent(claude.hooks['PreToolUse']![0]!.hooks[0]!.command, risky, host.machine.env);
    expect(pre.code).toBe(0);
    expect(JSON.parse(pre.stdout)).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(/daemon_unreachable/),
      },
    });

    const permission = await runAsAgent(
      claude.hooks['PermissionRequest']![0]!.hooks[0]!.command,
      hookInput('PermissionRequest', 'Bash', { command: 'rm -rf build' }),
      host.machine.env,
    );
    expect(permission.code).toBe(0);
    expect(JSON.parse(permission.stdout)).toMatchObject({
      hookSpecificOutput: { decision: { behavior: 'deny' } },
    });

    // Codex's PreToolUse takes its deny as exit 2.
    const codexPre = await runAsAgent(
      codex.hooks['PreToolUse']![0]!.hooks[0]!.command,
      risky,
      host.machine.env,
    );
    expect(codexPre.code).toBe(2);
    expect(codexPre.stderr).toMatch(/^latch: daemon_unreachable/);
  });
});
