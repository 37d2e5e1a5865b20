import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { latchGroup, newHost, readJson } from '../support/agentHooks.ts';

describe('latch install codex', () => {
  it('writes PreToolUse alone into $CODEX_HOME/hooks.json, and says Codex must trust it', async () => {
    const host = await newHost();
    const ran = await host.run(['install', 'codex']);
    expect(ran.code).toBe(0);
    expect(readJson(join(host.codex, 'hooks.json'))).toEqual({
      hooks: { PreToolUse: [latchGroup(host, 'codex')] },
    });
    expect(ran.stdout).toMatch(/trust/);
  });

  it('--project writes the project’s .codex/hooks.json, and ~/.codex is the default home', async () => {
    const host = await newHost();
    expect((await host.run(['install', 'codex', '--project'])).code).toBe(0);
    expect(readJson(join(host.project, '.codex', 'hooks.json'))).toEqual({
      hooks: { PreToolUse: [latchGroup(host, 'codex')] },
    });
    expect((await host.run(['install', 'codex'], { CODEX_HOME: undefined })).code).toBe(0);
    expect(readJson(join(host.user, '.codex', 'hooks.json'))).toHaveProperty('hooks.PreToolUse');
  });
});
