import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { latchGroup, latchHandler, newHost, readJson } from '../support/agentHooks.ts';

describe('a Latch hook added by hand under another event', () => {
  it('gets the new command in its place from install, and is taken out by uninstall', async () => {
    const host = await newHost();
    const path = join(host.codex, 'hooks.json');
    mkdirSync(host.codex);
    writeFileSync(
      path,
      JSON.stringify({
        hooks: {
          PermissionRequest: [
            { matcher: 'Bash', hooks: [{ type: 'command', command: 'latch hook codex', timeout: 330 }] },
          ],
        },
      }),
    );
    expect((await host.run(['install', 'codex'])).code).toBe(0);
    expect(readJson(path)).toEqual({
      hooks: {
        PermissionRequest: [{ matcher: 'Bash', hooks: [latchHandler(host, 'codex')] }],
        PreToolUse: [latchGroup(host, 'codex')],
      },
    });
    const ran = await host.run(['uninstall', 'codex']);
    expect(ran.stdout).toMatch(/^Removed 2 Latch hooks from /);
    expect(readJson(path)).toEqual({});
  });
});

describe('latch uninstall', () => {
  it('removes Latch’s hooks and the groups that leaves empty, and nothing else', async () => {
    const host = await newHost();
    const path = join(host.claude, 'settings.json');
    const before = {
      model: 'opus',
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'audit-bash' }] }],
        Stop: [{ hooks: [{ type: 'command', command: 'notify' }] }],
      },
    };
    mkdirSync(host.claude);
    writeFileSync(path, JSON.stringify(before, null, 2));
    await host.run(['install', 'claude-code']);
    // Another tool's command beside Latch's, in Latch's group, stays.
    const installed = readJson(path) as { hooks: { PreToolUse: { hooks: object[] }[] } };
    installed.hooks.PreToolUse[1]!.hooks.push({ type: 'command', command: 'echo also' });
    writeFileSync(path, JSON.stringify(installed, null, 2));

    const ran = await host.run(['uninstall', 'claude-code']);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^Removed 2 Latch hooks from /);
    expect(readJson(path)).toEqual({
      ...before,
      hooks: {
        PreToolUse: [
          ...before.hooks.PreToolUse,
          { matcher: '*', hooks: [{ type: 'command', command: 'echo also' }] },
        ],
        Stop: before.hooks.Stop,
      },
    });

    const again = await host.run(['uninstall', 'claude-code']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`No Latch hook in ${path}: nothing to remove.\n`);
  });

  it('leaves an empty object where install started from nothing, and --project touches the project only', async () => {
    const host = await newHost();
    await host.run(['install', 'codex']);
    await host.run(['install', 'codex', '--project']);
    expect((await host.run(['uninstall', 'codex', '--project'])).code).toBe(0);
    expect(readJson(join(host.project, '.codex', 'hooks.json'))).toEqual({});
    expect(readJson(join(host.codex, 'hooks.json'))).toEqual({
      hooks: { PreToolUse: [latchGroup(host, 'codex')] },
    });
  });

  it('refuses a settings file that is not valid JSON, and leaves it as it was', async () => {
    const host = await newHost();
    const path = join(host.codex, 'hooks.json');
    mkdirSync(host.codex);
    writeFileSync(path, '{"hooks": ');
    const ran = await host.run(['uninstall', 'codex']);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/hooks\.json is not valid JSON: .*; left it as it is/);
    expect(readFileSync(path, 'utf8')).toBe('{"hooks": ');
  });
});
