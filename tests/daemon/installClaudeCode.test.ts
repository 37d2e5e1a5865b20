import { lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LATCH_SCRIPT, latchGroup, latchHandler, newHost, readJson } from '../support/agentHooks.ts';
import { startDaemonForTest } from '../support/latchMachine.ts';

describe('latch install claude-code', () => {
  it('writes both hooks into an empty home, with absolute paths and the timeout this host needs', async () => {
    const host = await newHost();
    const ran = await host.run(['install', 'claude-code']);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const path = join(host.claude, 'settings.json');
    expect(readJson(path)).toEqual({
      hooks: {
        PreToolUse: [latchGroup(host, 'claude-code')],
        PermissionRequest: [latchGroup(host, 'claude-code')],
      },
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(ran.stdout).toContain(
      `Wrote Latch’s hook for PreToolUse and PermissionRequest (matcher "*") in ${path}`,
    );
    expect(ran.stdout).toContain(`command  ${latchHandler(host, 'claude-code').command}`);
    expect(ran.stdout).toMatch(/timeout {2}315 s: a phone may take up to 300 s here/);
    expect(ran.stdout).toMatch(/^Next: .*latch doctor/m);
  });

  it('says when no daemon answers at the socket the command names, and only then (review rv6)', async () => {
    const host = await newHost();
    const note = `Note: no daemon answers at ${host.machine.socket} now, the one socket the hook asks`;
    expect((await host.run(['install', 'claude-code'])).stdout).toContain(note);
    await startDaemonForTest(host.machine);
    const ran = await host.run(['install', 'claude-code']);
    expect(ran.code).toBe(0);
    expect(ran.stdout).not.toContain('Note: no daemon answers');
  });

  it('uses ~/.claude when CLAUDE_CONFIG_DIR is not set', async () => {
    const host = await newHost();
    const ran = await host.run(['install', 'claude-code'], { CLAUDE_CONFIG_DIR: undefined });
    expect(ran.code).toBe(0);
    expect(readJson(join(host.user, '.claude', 'settings.json'))).toHaveProperty('hooks.PreToolUse');
  });

  it('sizes the timeout for the longest wait, a policy rule’s included', async () => {
    const host = await newHost({
      policy:
        'default = "ask"\n[[rule]]\nname = "deploys wait long"\ntool = "Deploy"\naction = "ask"\ntimeout_seconds = 1200\n',
    });
    expect((await host.run(['install', 'claude-code'])).code).toBe(0);
    expect(readJson(join(host.claude, 'settings.json'))).toEqual({
      hooks: {
        PreToolUse: [latchGroup(host, 'claude-code', 1215)],
        PermissionRequest: [latchGroup(host, 'claude-code', 1215)],
      },
    });
  });

  it('keeps every other setting and hook, their order, the indentation and the file’s mode', async () => {
    const host = await newHost();
    const path = join(host.claude, 'settings.json');
    const before = {
      model: 'opus',
      permissions: { allow: ['Bash(npm test)'], deny: [] },
      hooks: {
        PostToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier --write' }] }],
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'audit-bash', timeout: 5 }] }],
      },
      statusLine: { type: 'command', command: 'status.sh' },
    };
    mkdirSync(host.claude);
    writeFileSync(path, JSON.stringify(before, null, 4), { mode: 0o640 });

    expect((await host.run(['install', 'claude-code'])).code).toBe(0);
    const after = readJson(path);
    expect(after).toEqual({
      ...before,
      hooks: {
        PostToolUse: before.hooks.PostToolUse,
        PreToolUse: [...before.hooks.PreToolUse, latchGroup(host, 'claude-code')],
        PermissionRequest: [latchGroup(host, 'claude-code')],
      },
    });
    expect(Object.keys(after)).toEqual(['model', 'permissions', 'hooks', 'statusLine']);
    expect(Object.keys(after['hooks'] as object)).toEqual(['PostToolUse', 'PreToolUse', 'PermissionRequest']);
    expect(readFileSync(path, 'utf8')).toContain('\n    "model": "opus"');
    expect(statSync(path).mode & 0o777).toBe(0o640);
  });

  it('writes a symlinked settings file where it points, and leaves the link a link', async () => {
    const host = await newHost();
    const dotfiles = join(host.project, 'dotfiles.json');
    writeFileSync(dotfiles, '{"model": "opus"}', { mode: 0o600 });
    mkdirSync(host.claude);
    symlinkSync(dotfiles, join(host.claude, 'settings.json'));
    expect((await host.run(['install', 'claude-code'])).code).toBe(0);
    expect(lstatSync(join(host.claude, 'settings.json')).isSymbolicLink()).toBe(true);
    expect(readJson(dotfiles)).toEqual({
      model: 'opus',
      hooks: {
        PreToolUse: [latchGroup(host, 'claude-code')],
        PermissionRequest: [latchGroup(host, 'claude-code')],
      },
    });
  });

  it('is idempotent: a second run leaves the file byte for byte as the first wrote it', async () => {
    const host = await newHost();
    const path = join(host.claude, 'settings.json');
    await host.run(['install', 'claude-code']);
    const first = readFileSync(path, 'utf8');
    const again = await host.run(['install', 'claude-code']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^Already there, unchanged:/);
    expect(readFileSync(path, 'utf8')).toBe(first);
  });

  it('replaces an older Latch hook where it stood (a bare latch, another timeout), and keeps its neighbours', async () => {
    const host = await newHost();
    const path = join(host.claude, 'settings.json');
    mkdirSync(host.claude);
    const neighbour = { type: 'command', command: 'echo checked', timeout: 3 };
    writeFileSync(
      path,
      JSON.stringify({
        hooks: {
          PreToolUse: [
            { matcher: 'Read', hooks: [{ type: 'command', command: 'log-reads' }] },
            {
              matcher: '*',
              hooks: [{ type: 'command', command: 'latch hook claude-code', timeout: 330 }, neighbour],
            },
          ],
          PermissionRequest: [
            {
              matcher: '*',
              hooks: [
                {
                  type: 'command',
                  command: `'/old/node' '${LATCH_SCRIPT}' hook claude-code --timeout 90`,
                  timeout: 90,
                },
              ],
            },
          ],
        },
      }),
    );
    expect((await host.run(['install', 'claude-code'])).code).toBe(0);
    expect(readJson(path)).toEqual({
      hooks: {
        PreToolUse: [
          { matcher: 'Read', hooks: [{ type: 'command', command: 'log-reads' }] },
          latchGroup(host, 'claude-code'),
          { matcher: '*', hooks: [neighbour] },
        ],
        PermissionRequest: [latchGroup(host, 'claude-code')],
      },
    });
  });

  it('--project writes the project’s .claude/settings.json and leaves the user’s alone', async () => {
    const host = await newHost();
    const ran = await host.run(['install', 'claude-code', '--project']);
    expect(ran.code).toBe(0);
    expect(readJson(join(host.project, '.claude', 'settings.json'))).toEqual({
      hooks: {
        PreToolUse: [latchGroup(host, 'claude-code')],
        PermissionRequest: [latchGroup(host, 'claude-code')],
      },
    });
    expect(() => statSync(host.claude)).toThrow(/ENOENT/);
  });

  it('refuses a settings file that is not valid JSON, and leaves it as it was', async () => {
    const host = await newHost();
    const path = join(host.claude, 'settings.json');
    mkdirSync(host.claude);
    const broken = '{ "model": "opus", // a comment\n}';
    writeFileSync(path, broken);
    const ran = await host.run(['install', 'claude-code']);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^latch: .*settings\.json is not valid JSON: .*; left it as it is\n$/);
    expect(readFileSync(path, 'utf8')).toBe(broken);
  });

  it('refuses settings that are not an object, or whose hooks are not, and leaves them as they were', async () => {
    const host = await newHost();
    const path = join(host.claude, 'settings.json');
    mkdirSync(host.claude);
    for (const [text, message] of [
      ['["hooks"]', /does not hold a JSON object/],
      ['{"hooks": "latch"}', /"hooks" in .* is not an object/],
      ['{"hooks": {"PreToolUse": {"matcher": "*"}}}', /"hooks\.PreToolUse" in .* is not a list/],
    ] as const) {
      writeFileSync(path, text);
      const ran = await host.run(['install', 'claude-code']);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toMatch(message);
      expect(readFileSync(path, 'utf8')).toBe(text);
    }
  });

  it('asks for latch init first on a machine where Latch is not set up', async () => {
    const host = await newHost({ init: false });
    const ran = await host.run(['install', 'claude-code']);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toBe('latch: Latch is not set up on this machine: run latch init first\n');
    expect(() => statSync(host.claude)).toThrow(/ENOENT/);
  });

  it('refuses an agent it does not know, as a usage error (exit 2)', async () => {
    const host = await newHost();
    const ran = await host.run(['install', 'cursor']);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/Allowed choices are claude-code, codex/);
  });
});
