import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOOK_FAILSAFE, HOOK_LAUNCHER, hookEnvironment } from '../../daemon/install/hookCommand.ts';
import { shellQuote } from '../../daemon/install/shellWords.ts';
import { latchGroup, newHost, type Host } from '../support/agentHooks.ts';

/** `latch doctor`'s lines by check name. */
async function doctor(host: Host, env?: NodeJS.ProcessEnv) {
  const ran = await host.run(['doctor'], env);
  const lines = new Map<string, { ok: boolean; warning?: true; detail: string; fix?: string }>();
  const text = ran.stdout.split('\n');
  for (const [index, line] of text.entries()) {
    const match = /^([✓✗!]) ([^:]+): (.*)$/.exec(line);
    if (!match) continue;
    const fix = /^ {2}fix: (.*)$/.exec(text[index + 1] ?? '')?.[1];
    lines.set(match[2]!, {
      ok: match[1] !== '✗',
      ...(match[1] === '!' ? { warning: true } : {}),
      detail: match[3]!,
      ...(fix ? { fix } : {}),
    });
  }
  return { ran, lines };
}

describe('latch doctor run as root', () => {
  it('warns, in one line that fails no check, that an agent running as root can change system places Latch cannot all know (review kc)', async () => {
    const host = await newHost();
    const { ran, lines } = await doctor(host);
    const warning = lines.get('running as root');
    if (process.geteuid?.() !== 0) return expect(warning).toBeUndefined();
    expect(warning).toEqual({
      ok: true,
      warning: true,
      detail: expect.stringMatching(
        /^an agent running as root can change system places Latch cannot all know/,
      ),
    });
    expect(ran.stdout.split('\n').filter((line) => line.includes('running as root'))).toHaveLength(1);
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

  it('names a login shell that Codex cannot run hooks with (csh, tcsh: `-lc` refused; a restricted shell)', async () => {
    const host = await newHost();
    await host.run(['install', 'codex']);
    expect((await doctor(host, { SHELL: '/bin/tcsh' })).lines.get('Codex hook shell')).toEqual({
      ok: false,
      detail:
        'Codex runs hooks with /bin/tcsh -lc, which fails (exit 1: tcsh refuses -lc): Latch never starts, and Codex runs every tool',
      fix: 'start Codex with SHELL naming bash, zsh or fish (SHELL=/bin/bash codex)',
    });
    // Review P: rbash refuses `/usr/bin/env …`, the hook command's first word.
    expect((await doctor(host, { SHELL: '/bin/rbash' })).lines.get('Codex hook shell')).toMatchObject({
      ok: false,
      detail:
        'Codex runs hooks with /bin/rbash -lc, which fails (exit 1: rbash, a restricted shell, refuses a program named by its path): Latch never starts, and Codex runs every tool',
    });
    expect((await doctor(host, { SHELL: '/bin/sh' })).lines.get('Codex hook shell')).toMatchObject({
      ok: true,
    });
  });

  // Review HA-2: Codex runs `$SHELL -lc '<hook>'` and runs the tool on anything but exit 2 with a
  // reason; doctor judged the shell by its name and passed these.
  describe('runs the hook as Codex does, after the login files', () => {
    const writeProfile = (host: Host, profile: string) => {
      mkdirSync(host.user, { recursive: true });
      writeFileSync(join(host.user, '.bash_profile'), `${profile}\n`);
    };
    const loginShell = async (profile: string | undefined, shell = '/bin/bash') => {
      const host = await newHost();
      await host.run(['install', 'codex']);
      if (profile !== undefined) writeProfile(host, profile);
      return (await doctor(host, { SHELL: shell })).lines.get('Codex hook shell');
    };
    const fix =
      'in your login files, run what replaces or ends the shell, or reads input, only in a terminal ([ -t 0 ] && exec zsh -l, or inside case $- in *i*) … esac); or start Codex with SHELL naming a shell whose login files do none of that';

    it('names a login file that replaces the shell, whose new shell runs the hook’s input as commands', async () => {
      const shells = [
        '[ -x /bin/sh ] && exec /bin/sh',
        ...(existsSync('/usr/bin/zsh') ? ['exec zsh -l'] : []),
      ];
      for (const profile of shells)
        expect(await loginShell(profile), profile).toEqual({
          ok: false,
          detail: expect.stringMatching(
            /^Codex runs hooks with \/bin\/bash -lc, which exited 127, and the hook's input came back as a command the shell ran: a login file replaces the shell \(exec …\?\), which read the input as its script; Latch never started/,
          ),
          fix,
        });
    });

    it('names a login file that ends the shell (exit 0, which Codex reads as go on)', async () => {
      expect(await loginShell('exit 0')).toEqual({
        ok: false,
        detail:
          'Codex runs hooks with /bin/bash -lc, which exited 0 before Latch started: a login file ends the shell (exit?), which Codex reads as go on, and runs the tool',
        fix,
      });
    });

    it('names a login file whose trap on exit turns Latch’s exit 2 into 0', async () => {
      expect((await loginShell("trap 'exit 0' EXIT"))?.detail).toBe(
        "Codex runs hooks with /bin/bash -lc, which ran Latch's hook, whose answer was lost: the shell then exited 0, not 2 (a trap on exit?), and Codex runs the tool",
      );
    });

    it('names a SHELL that cannot be started', async () => {
      expect(await loginShell(undefined, '/nonexistent/bash')).toEqual({
        ok: false,
        detail:
          'Codex runs hooks with /nonexistent/bash -lc, which cannot be started (spawn /nonexistent/bash ENOENT): Latch never starts, and Codex runs every tool',
        fix: 'start Codex with SHELL naming bash, zsh or fish (SHELL=/bin/bash codex)',
      });
    });

    it('names a login file that reads the hook’s input', async () => {
      expect((await loginShell('read -r line'))?.detail).toBe(
        'Codex runs hooks with /bin/bash -lc, which started Latch without the input Codex sent: a login file read it first, and Latch refused what was left',
      );
    });

    it('names a login file that waits, within seconds, and leaves none of its processes behind', async () => {
      // An hour's wait: a check that waited for it would fail the test by its timeout.
      expect((await loginShell('sleep 3141.59'))?.detail).toMatch(
        /^Codex runs hooks with \/bin\/bash -lc, which gave no answer within 5 s: a login file waits .*; or is slow, and spends the time a phone has to answer$/,
      );
      expect(spawnSync('pgrep', ['-f', 'sleep 3141.59']).stdout.toString()).toBe('');
    });

    it('passes a login file that replaces the shell only in a terminal, and one that prints', async () => {
      expect(await loginShell('echo welcome; [ -t 0 ] && exec /bin/sh')).toEqual({
        ok: true,
        detail: "/bin/bash -lc runs Latch's hook, which answers (exit 2 to a test input)",
      });
      expect((await loginShell(undefined))?.ok).toBe(true);
    });

    it('runs only the command this Latch writes, not another a project’s settings name', async () => {
      const host = await newHost();
      await host.run(['install', 'codex', '--project']);
      const path = join(host.project, '.codex', 'hooks.json');
      const marker = join(host.project, 'RAN');
      writeFileSync(path, readFileSync(path, 'utf8').replace(' hook codex', ` hook codex; touch ${marker}`));
      expect((await doctor(host, { SHELL: '/bin/bash' })).lines.get('Codex hook shell')).toEqual({
        ok: false,
        detail: 'not tried: no Codex hook here is the command this Latch writes, and doctor runs no other',
        fix: 'latch install codex',
      });
      expect(existsSync(marker)).toBe(false);
    });

    it('latch install codex warns of it', async () => {
      const host = await newHost();
      writeProfile(host, 'exit 0');
      const ran = await host.run(['install', 'codex'], { SHELL: '/bin/bash' });
      expect(ran.code).toBe(0);
      expect(ran.stdout).toContain(
        `Warning: Codex runs hooks with /bin/bash -lc, which exited 0 before Latch started: a login file ends the shell (exit?), which Codex reads as go on, and runs the tool\n  fix: ${fix}\n`,
      );
    });
  });

  it('names a missing PermissionRequest hook when PreToolUse alone is there', async () => {
    const host = await newHost();
    mkdirSync(host.claude);
    writeFileSync(
      join(host.claude, 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: [latchGroup(host, 'claude-code')] } }),
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
      fix: 'latch install claude-code (it writes the absolute paths of this Node and of Latch, the environment the hook runs in, and the failsafe)',
    });
  });

  it('names a command without the failsafe, or with the one latch install wrote before, and accepts it spaced another way', async () => {
    const host = await newHost();
    await host.run(['install', 'claude-code']);
    const path = join(host.claude, 'settings.json');
    const installed = readFileSync(path, 'utf8');
    const failsafe = ` ${JSON.stringify(HOOK_FAILSAFE).slice(1, -1)}`;
    const missing = (event: string) =>
      `${event} in ${path}: it does not end in ${HOOK_FAILSAFE}: a hook killed or out of memory before it answers lets the agent run the tool`;
    // `|| exit 2` alone blocks with no reason on stderr, which Codex runs the tool after.
    for (const written of ['', ' || exit 2']) {
      writeFileSync(path, installed.replaceAll(failsafe, written));
      const without = await doctor(host);
      expect(without.ran.code).toBe(1);
      expect(without.lines.get('Claude Code hook command')).toMatchObject({
        ok: false,
        detail: `${missing('PreToolUse')}; ${missing('PermissionRequest')}`,
      });
    }

    writeFileSync(path, installed.replaceAll(failsafe, `  ${failsafe.trim().replaceAll(' ', '  ')} `));
    expect((await doctor(host)).lines.get('Claude Code hook command')).toMatchObject({ ok: true });
    // Anything else after it is shell syntax doctor cannot follow.
    writeFileSync(path, installed.replaceAll(failsafe, ' || exit 0'));
    expect((await doctor(host)).lines.get('Claude Code hook command')?.detail).toMatch(
      /it uses shell syntax, which latch doctor cannot follow/,
    );
  });

  it('names a command that starts Node without /usr/bin/env, as installs before it did, and latch install mends it', async () => {
    const host = await newHost();
    await host.run(['install', 'claude-code']);
    const path = join(host.claude, 'settings.json');
    const environment = hookEnvironment(host.machine.env).map(shellQuote).join(' ');
    writeFileSync(path, readFileSync(path, 'utf8').replaceAll(`${HOOK_LAUNCHER} ${environment} `, ''));
    const unlaunched = (event: string) =>
      `${event} in ${path}: it does not start with ${HOOK_LAUNCHER}: under fish, a Node gone after an upgrade skips the failsafe, and the agent runs the tool`;
    const { lines, ran } = await doctor(host);
    expect(ran.code).toBe(1);
    expect(lines.get('Claude Code hook command')).toMatchObject({
      ok: false,
      detail: `${unlaunched('PreToolUse')}; ${unlaunched('PermissionRequest')}`,
    });

    await host.run(['install', 'claude-code']);
    expect((await doctor(host)).lines.get('Claude Code hook command')).toMatchObject({ ok: true });
  });

  it('names a command that leaves the hook’s environment to the agent, or fixes another Latch’s, and latch install mends it', async () => {
    const host = await newHost();
    await host.run(['install', 'claude-code']);
    const path = join(host.claude, 'settings.json');
    const installed = readFileSync(path, 'utf8');
    const environment = hookEnvironment(host.machine.env).map(shellQuote).join(' ');
    const problem = (event: string) =>
      `${event} in ${path}: it does not fix the hook's environment as this Latch needs (${hookEnvironment(host.machine.env).join(' ')}): an agent started in another one could point the hook at another socket, or load code into it`;
    // As installs before it wrote the command, and as one for another home would.
    for (const written of [
      '',
      `${hookEnvironment({ ...host.machine.env, LATCH_HOME: join(host.user, 'old') })
        .map(shellQuote)
        .join(' ')} `,
    ]) {
      writeFileSync(path, installed.replaceAll(`${environment} `, written));
      const { lines, ran } = await doctor(host);
      expect(ran.code).toBe(1);
      expect(lines.get('Claude Code hook command')).toMatchObject({
        ok: false,
        detail: `${problem('PreToolUse')}; ${problem('PermissionRequest')}`,
      });
    }
    await host.run(['install', 'claude-code']);
    expect((await doctor(host)).lines.get('Claude Code hook command')).toMatchObject({ ok: true });
  });

  it('names words between Node and Latch’s script, which run too (review rv6)', async () => {
    const host = await newHost();
    await host.run(['install', 'claude-code']);
    const path = join(host.claude, 'settings.json');
    const node = shellQuote(process.execPath);
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replaceAll(
        `${node} `,
        `/usr/bin/env NODE_OPTIONS=--require=/tmp/x.cjs ${node} `,
      ),
    );
    expect((await doctor(host)).lines.get('Claude Code hook command')?.detail).toContain(
      `PreToolUse in ${path}: it runs NODE_OPTIONS=--require=/tmp/x.cjs ${process.execPath} between /usr/bin/env and `,
    );
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
