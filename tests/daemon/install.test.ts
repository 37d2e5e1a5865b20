import {
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellQuote } from '../../daemon/install/shellWords.ts';
import {
  hookInput,
  initMachine,
  newMachine,
  runLatch,
  type LatchMachine,
  type Ran,
} from '../support/latchMachine.ts';
import { LATCH_BIN } from '../support/latchCli.ts';
import { runToEnd } from '../support/processes.ts';

const LATCH_SCRIPT = realpathSync(LATCH_BIN);
// Nothing listens on the discard port: doctor's relay check fails at once.
const NO_RELAY = 'http://127.0.0.1:9';

/** What `latch install` writes, for the default config and policy (a 300 s wait, plus 15 s). */
const latchHandler = (agent: 'claude-code' | 'codex', timeout = 315) => ({
  type: 'command',
  command: `${shellQuote(process.execPath)} ${shellQuote(LATCH_SCRIPT)} hook ${agent} --timeout ${timeout}`,
  timeout,
});
const latchGroup = (agent: 'claude-code' | 'codex', timeout = 315) => ({
  matcher: '*',
  hooks: [latchHandler(agent, timeout)],
});

/** A machine set up with `latch init`, and an empty user folder, agent folders and project, all in a temp dir. */
interface Host {
  machine: LatchMachine;
  user: string;
  claude: string;
  codex: string;
  project: string;
  run(args: string[], env?: NodeJS.ProcessEnv): Promise<Ran>;
}

async function newHost(options: { policy?: string; init?: boolean } = {}): Promise<Host> {
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
  machine.env = { ...machine.env, CLAUDE_CONFIG_DIR: host.claude, CODEX_HOME: host.codex };
  return {
    ...host,
    run: (args, env) => runLatch(machine, args, { cwd: host.project, ...(env ? { env } : {}) }),
  };
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

/** Runs an agent's hook command the way agents do (`sh -c`), with no PATH at all. */
function runAsAgent(command: string, input: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return runToEnd(['/bin/sh', '-c', command], { env: { ...env, PATH: '' }, input });
}

/** `latch doctor`'s lines by check name. */
async function doctor(host: Host, env?: NodeJS.ProcessEnv) {
  const ran = await host.run(['doctor'], env);
  const lines = new Map<string, { ok: boolean; detail: string; fix?: string }>();
  const text = ran.stdout.split('\n');
  for (const [index, line] of text.entries()) {
    const match = /^([✓✗]) ([^:]+): (.*)$/.exec(line);
    if (!match) continue;
    const fix = /^ {2}fix: (.*)$/.exec(text[index + 1] ?? '')?.[1];
    lines.set(match[2]!, { ok: match[1] === '✓', detail: match[3]!, ...(fix ? { fix } : {}) });
  }
  return { ran, lines };
}

describe('latch install claude-code', () => {
  it('writes both hooks into an empty home, with absolute paths and the timeout this host needs', async () => {
    const host = await newHost();
    const ran = await host.run(['install', 'claude-code']);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const path = join(host.claude, 'settings.json');
    expect(readJson(path)).toEqual({
      hooks: { PreToolUse: [latchGroup('claude-code')], PermissionRequest: [latchGroup('claude-code')] },
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(ran.stdout).toContain(
      `Wrote Latch’s hook for PreToolUse and PermissionRequest (matcher "*") in ${path}`,
    );
    expect(ran.stdout).toContain(`command  ${latchHandler('claude-code').command}`);
    expect(ran.stdout).toMatch(/timeout {2}315 s: a phone may take up to 300 s here/);
    expect(ran.stdout).toMatch(/^Next: .*latch doctor/m);
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
        PreToolUse: [latchGroup('claude-code', 1215)],
        PermissionRequest: [latchGroup('claude-code', 1215)],
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
        PreToolUse: [...before.hooks.PreToolUse, latchGroup('claude-code')],
        PermissionRequest: [latchGroup('claude-code')],
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
      hooks: { PreToolUse: [latchGroup('claude-code')], PermissionRequest: [latchGroup('claude-code')] },
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
          latchGroup('claude-code'),
          { matcher: '*', hooks: [neighbour] },
        ],
        PermissionRequest: [latchGroup('claude-code')],
      },
    });
  });

  it('--project writes the project’s .claude/settings.json and leaves the user’s alone', async () => {
    const host = await newHost();
    const ran = await host.run(['install', 'claude-code', '--project']);
    expect(ran.code).toBe(0);
    expect(readJson(join(host.project, '.claude', 'settings.json'))).toEqual({
      hooks: { PreToolUse: [latchGroup('claude-code')], PermissionRequest: [latchGroup('claude-code')] },
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

describe('latch install codex', () => {
  it('writes PreToolUse alone into $CODEX_HOME/hooks.json, and says Codex must trust it', async () => {
    const host = await newHost();
    const ran = await host.run(['install', 'codex']);
    expect(ran.code).toBe(0);
    expect(readJson(join(host.codex, 'hooks.json'))).toEqual({
      hooks: { PreToolUse: [latchGroup('codex')] },
    });
    expect(ran.stdout).toMatch(/trust/);
  });

  it('--project writes the project’s .codex/hooks.json, and ~/.codex is the default home', async () => {
    const host = await newHost();
    expect((await host.run(['install', 'codex', '--project'])).code).toBe(0);
    expect(readJson(join(host.project, '.codex', 'hooks.json'))).toEqual({
      hooks: { PreToolUse: [latchGroup('codex')] },
    });
    expect((await host.run(['install', 'codex'], { CODEX_HOME: undefined })).code).toBe(0);
    expect(readJson(join(host.user, '.codex', 'hooks.json'))).toHaveProperty('hooks.PreToolUse');
  });
});

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
        PermissionRequest: [{ matcher: 'Bash', hooks: [latchHandler('codex')] }],
        PreToolUse: [latchGroup('codex')],
      },
    });
    const ran = await host.run(['uninstall', 'codex']);
    expect(ran.stdout).toMatch(/^Removed 2 Latch hooks from /);
    expect(readJson(path)).toEqual({});
  });
});

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
      hooks: { PreToolUse: [latchGroup('codex')] },
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

describe('latch doctor checks the agents’ hooks', () => {
  it('names a missing hook, for an agent whose folder exists', async () => {
    const host = await newHost();
    mkdirSync(host.claude);
    const { lines } = await doctor(host);
    expect(lines.get('Claude Code hooks')).toEqual({
      ok: false,
      detail: `no Latch hook for PreToolUse, PermissionRequest in ${join(host.claude, 'settings.json')}: Claude Code does not ask Latch`,
      fix: 'latch install claude-code',
    });
    expect(lines.has('Codex hooks')).toBe(false);
  });

  it('names a missing PermissionRequest hook when PreToolUse alone is there', async () => {
    const host = await newHost();
    mkdirSync(host.claude);
    writeFileSync(
      join(host.claude, 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: [latchGroup('claude-code')] } }),
    );
    const { lines } = await doctor(host);
    expect(lines.get('Claude Code hooks')?.detail).toMatch(/^no Latch hook for PermissionRequest in /);
  });

  it('passes every hook check once installed, in the user’s settings or the project’s', async () => {
    const host = await newHost();
    await host.run(['install', 'claude-code', '--project']);
    await host.run(['install', 'codex']);
    const { lines } = await doctor(host);
    for (const name of [
      'Claude Code hooks',
      'Claude Code hook command',
      'Claude Code hook timeout',
      'Codex hooks',
      'Codex hook command',
      'Codex hook timeout',
    ])
      expect(lines.get(name), name).toMatchObject({ ok: true });
    expect(lines.get('Claude Code hook timeout')?.detail).toBe('covers waits for a phone of up to 300 s');
  });

  it('names a command whose Node is gone (after a Node upgrade)', async () => {
    const host = await newHost();
    await host.run(['install', 'claude-code']);
    const path = join(host.claude, 'settings.json');
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replaceAll(shellQuote(process.execPath), '/opt/node-18/bin/node'),
    );
    const { lines, ran } = await doctor(host);
    expect(ran.code).toBe(1);
    expect(lines.get('Claude Code hook command')).toEqual({
      ok: false,
      detail: `PreToolUse in ${path}: /opt/node-18/bin/node does not exist; PermissionRequest in ${path}: /opt/node-18/bin/node does not exist`,
      fix: 'latch install claude-code (it writes the absolute paths of this Node and of Latch)',
    });
  });

  it('names a bare latch that is not on PATH', async () => {
    const host = await newHost();
    mkdirSync(host.codex);
    writeFileSync(
      join(host.codex, 'hooks.json'),
      JSON.stringify({
        hooks: {
          PreToolUse: [
            { matcher: '.*', hooks: [{ type: 'command', command: 'latch hook codex', timeout: 330 }] },
          ],
        },
      }),
    );
    const { lines } = await doctor(host, { PATH: '/nonexistent' });
    expect(lines.get('Codex hooks')?.ok).toBe(true);
    expect(lines.get('Codex hook command')).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/latch is not on PATH: the agent would get exit 127 and run the tool$/),
    });
    // The old docs' 330 s, with a hook that counts on the agent's default 600 s.
    expect(lines.get('Codex hook timeout')).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/the agent stops it at 330 s, but it counts on 600 s/),
    });
  });

  it('names a timeout shorter than the longest wait for a phone', async () => {
    const host = await newHost();
    await host.run(['install', 'claude-code']);
    // The wait grows after the hook was installed.
    writeFileSync(
      host.machine.files.config,
      readFileSync(host.machine.files.config, 'utf8').replace(
        'timeout_seconds = 300',
        'timeout_seconds = 600',
      ),
    );
    const path = join(host.claude, 'settings.json');
    const { lines } = await doctor(host);
    expect(lines.get('Claude Code hook timeout')).toEqual({
      ok: false,
      detail: [
        `PreToolUse in ${path}: 315 s, less than the 615 s a phone may need here (waits of up to 600 s)`,
        `PermissionRequest in ${path}: 315 s, less than the 615 s a phone may need here (waits of up to 600 s)`,
      ].join('; '),
      fix: 'latch install claude-code (it writes timeout 615)',
    });
  });
});
