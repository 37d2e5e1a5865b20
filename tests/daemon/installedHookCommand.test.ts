import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { HOOK_FAILSAFE, HOOK_LAUNCHER, hookEnvironment } from '../../daemon/install/hookCommand.ts';
import { parseHookCommand } from '../../daemon/install/parseHookCommand.ts';
import { shellQuote } from '../../daemon/install/shellWords.ts';
import { hookInput, type Ran } from '../support/latchMachine.ts';
import { LATCH_SCRIPT, newHost, readJson, type Host } from '../support/agentHooks.ts';
import { descendantsOf, killAll, runToEnd } from '../support/processes.ts';

/** Runs an agent's hook command the way agents do (`sh -c`, or Codex's shell), with no PATH at all. */
function runAsAgent(
  command: string,
  input: string,
  env: NodeJS.ProcessEnv,
  shellPath = '/bin/sh',
): Promise<Ran> {
  return runToEnd([shellPath, '-c', command], { env: { ...env, PATH: '' }, input });
}

type HookSettings = { hooks: Record<string, { hooks: { command: string }[] }[]> };

async function installedPreToolUse(host: Host): Promise<string> {
  await host.run(['install', 'claude-code']);
  const settings = readJson(join(host.claude, 'settings.json')) as HookSettings;
  return settings.hooks['PreToolUse']![0]!.hooks[0]!.command;
}

/**
 * Runs a hook command as an agent does and SIGKILLs its Node while it reads the agent's input:
 * what the OOM killer or a V8 out-of-memory abort does, and no handler of the hook can answer.
 */
async function killedWhileReading(command: string, env: NodeJS.ProcessEnv, shellPath = '/bin/sh') {
  const shell = spawn(shellPath, ['-c', command], {
    env: { ...env, PATH: '' },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const ended = once(shell, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let stderr = '';
  shell.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const runsLatch = (pid: number) =>
    readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1] === LATCH_SCRIPT;
  try {
    // Without `||`, sh runs the hook in its own process (exec); with it, as a child.
    const hook = await vi.waitFor(
      () => {
        const pid = [shell.pid!, ...descendantsOf(shell.pid!).keys()].find(runsLatch);
        if (pid === undefined) throw new Error('the hook has not started');
        return pid;
      },
      { timeout: 10_000, interval: 20 },
    );
    process.kill(hook, 'SIGKILL');
    const [code, signal] = await ended;
    return { code, signal, stderr };
  } finally {
    killAll([shell.pid!, ...descendantsOf(shell.pid!).keys()]);
  }
}

/** The shells on this machine that agents run hooks with: sh always, the others where installed. */
const SHELLS = ['/bin/sh', '/bin/bash', '/usr/bin/zsh', '/usr/bin/fish'].filter((path) => existsSync(path));

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
    // A deny is exit 2 for Claude Code too; its reason, and the failsafe's line after it.
    expect(pre.code).toBe(2);
    expect(pre.stderr).toMatch(/daemon_unreachable/);

    const permission = await runAsAgent(
      claude.hooks['PermissionRequest']![0]!.hooks[0]!.command,
      hookInput('PermissionRequest', 'Bash', { command: 'rm -rf build' }),
      host.machine.env,
    );
    expect(permission.code).toBe(2);
    expect(permission.stderr).toMatch(/daemon_unreachable/);

    // Codex's PreToolUse takes its deny as exit 2.
    const codexPre = await runAsAgent(
      codex.hooks['PreToolUse']![0]!.hooks[0]!.command,
      risky,
      host.machine.env,
    );
    expect(codexPre.code).toBe(2);
    expect(codexPre.stderr).toMatch(/^latch: daemon_unreachable/);
    // The failsafe follows the hook's own exit 2 too: its line must stay true after a reason.
    expect(codexPre.stderr).toMatch(
      /\nlatch: blocked \(with no reason above, the hook ended without an answer\)\n$/,
    );
  });

  it('blocks (exit 2) when its Node is killed before it answers, or is gone after an upgrade', async () => {
    const host = await newHost();
    const command = await installedPreToolUse(host);
    const risky = hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' });

    // In every shell here that agents run hooks with, and with a reason on stderr: without one,
    // Codex runs the tool after exit 2 too, and zsh and fish print nothing for a killed child.
    for (const shellPath of SHELLS) {
      const killed = await killedWhileReading(command, host.machine.env, shellPath);
      expect(killed, shellPath).toMatchObject({ code: 2, signal: null });
      expect(killed.stderr, shellPath).toContain(
        'latch: blocked (with no reason above, the hook ended without an answer)',
      );
    }
    // The same hook without the failsafe: the agent sees 137 (or SIGKILL itself, from a shell that
    // execs its last command), and runs the tool.
    const bare = await killedWhileReading(command.replace(` ${HOOK_FAILSAFE}`, ''), host.machine.env);
    expect(String(bare.code ?? bare.signal)).toMatch(/^(137|SIGKILL)$/);

    // A Node gone after an upgrade (127), or a file in its place that cannot run (126), in every
    // shell: fish does not run `|| …` after a command it could not start, so env starts it.
    const notExecutable = join(host.user, 'node');
    writeFileSync(notExecutable, '', { mode: 0o644 });
    for (const [node, code] of [
      ['/opt/node-18/bin/node', 127],
      [notExecutable, 126],
    ] as const) {
      const broken = command.replace(shellQuote(process.execPath), node);
      const launcher = [HOOK_LAUNCHER, ...hookEnvironment(host.machine.env).map(shellQuote)].join(' ');
      for (const shellPath of SHELLS) {
        const ran = await runAsAgent(broken, risky, host.machine.env, shellPath);
        expect(ran.code, `${shellPath}: ${node}`).toBe(2);
        expect(ran.stderr, shellPath).toContain(
          'latch: blocked (with no reason above, the hook ended without an answer)',
        );
      }
      expect((await runAsAgent(broken.replace(` ${HOOK_FAILSAFE}`, ''), risky, host.machine.env)).code).toBe(
        code,
      );
      // Without the launcher, fish ends the line at the command it could not start.
      if (SHELLS.includes('/usr/bin/fish'))
        expect(
          (await runAsAgent(broken.replace(`${launcher} `, ''), risky, host.machine.env, '/usr/bin/fish'))
            .code,
        ).toBe(code);
    }
  });
});

describe('the environment the installed hook runs in', () => {
  it('is the one it was installed with: an agent started in another cannot point it at its own socket or preload code into it', async () => {
    const host = await newHost();
    const command = await installedPreToolUse(host);
    // What a script could start an agent with: its own runtime folder, where a socket answers
    // whatever it likes, its own Latch home, and a preload.
    const elsewhere = join(host.user, 'elsewhere');
    mkdirSync(join(elsewhere, 'latch'), { recursive: true, mode: 0o700 });
    let askedElsewhere = 0;
    const impostor = createServer((socket) => {
      askedElsewhere += 1;
      socket.destroy();
    });
    const impostorSocket = join(elsewhere, 'latch', 'daemon.sock');
    await new Promise<void>((resolve) => impostor.listen(impostorSocket, resolve));
    chmodSync(impostorSocket, 0o600);
    // A Latch home of its own, set up enough for a hook to go on to ask a socket.
    const otherHome = join(host.user, 'other-latch');
    mkdirSync(otherHome);
    writeFileSync(join(otherHome, 'config.toml'), '');
    const preloaded = join(host.user, 'preloaded');
    const preload = join(host.user, 'preload.cjs');
    writeFileSync(preload, `require('node:fs').writeFileSync(${JSON.stringify(preloaded)}, 'ran');`);
    const agentEnv = {
      ...host.machine.env,
      XDG_RUNTIME_DIR: elsewhere,
      LATCH_HOME: otherHome,
      NODE_OPTIONS: `--require ${preload}`,
    };
    const risky = hookInput('PreToolUse', 'Bash', { command: 'rm -rf build' });
    try {
      const ran = await runAsAgent(command, risky, agentEnv);
      expect(ran.code).toBe(2);
      // Asked the daemon it was installed for (not running here), by its socket.
      expect(ran.stderr).toContain(`daemon_unreachable: `);
      expect(ran.stderr).toContain(host.machine.socket);
      expect(askedElsewhere).toBe(0);
      expect(existsSync(preloaded)).toBe(false);

      // The same command without its fixed environment, as installs before it wrote it, asks the
      // socket and runs the preload the agent's starter chose.
      const environment = hookEnvironment(host.machine.env).map(shellQuote).join(' ');
      expect(command).toContain(`${HOOK_LAUNCHER} ${environment} `);
      await runAsAgent(command.replace(`${environment} `, ''), risky, agentEnv);
      expect(askedElsewhere).toBe(1);
      expect(existsSync(preloaded)).toBe(true);
    } finally {
      impostor.close();
    }
  });
});

describe('reading a hook command back (latch doctor, latch install)', () => {
  const installed = `'/usr/bin/node' '/opt/latch/daemon/bin/latch.cjs' hook codex --timeout 315`;

  it('counts the failsafe, however it is spaced on its line, and takes it off once', () => {
    expect(parseHookCommand(`${installed} ${HOOK_FAILSAFE}`)).toMatchObject({ failsafe: true, plain: true });
    expect(parseHookCommand(`${installed}\t${HOOK_FAILSAFE.replaceAll(' ', '  ')}  `)).toMatchObject({
      failsafe: true,
      plain: true,
    });
  });

  it('does not count what a shell reads otherwise: a bare || exit 2, a line break, or both failsafes', () => {
    // `|| exit 2` says nothing on stderr, and Codex runs the tool after it.
    expect(parseHookCommand(`${installed} || exit 2`)).toMatchObject({ failsafe: false, plain: true });
    // After a line break, `|| …` is another command: zsh refuses it, fish ignores it.
    expect(parseHookCommand(`${installed}\n${HOOK_FAILSAFE}`)).toMatchObject({ failsafe: false });
    // The first `|| exit 2` ends the shell silently before the failsafe could speak.
    expect(parseHookCommand(`${installed} || exit 2 ${HOOK_FAILSAFE}`)).toMatchObject({ plain: false });
  });
});
