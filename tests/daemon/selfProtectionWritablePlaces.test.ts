import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import {
  hookInput,
  initMachine,
  newMachine,
  pairPhoneDirectly,
  startDaemon,
  startHook,
  type LatchMachine,
  type RunningDaemon,
} from '../support/latchMachine.ts';
import { StandInRelay } from '../support/standInRelay.ts';

/**
 * Self-protection judges a place by whether the daemon's user may write it, wherever it is
 * (review kc): a folder of the daemon's PATH outside the home folder (Homebrew's), the git config
 * git resolves (includes, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL), the start-up files of xonsh,
 * nushell and the other shells Codex may run its hooks with, and as root the system's places.
 * Each Write is asked on a phone through the real hook and daemon, not deferred to the agent's
 * own prompt, where the allowed `git status` or `ls` would then run what it wrote.
 */
let relay: StandInRelay;
let machine: LatchMachine;
let daemon: RunningDaemon;
let phone: TestPhone;
let user: string;
let brew: string;
let config: string;
/** A folder on the daemon's PATH that its user cannot write, if this machine has one. */
let unwritable: string | undefined;

const canWrite = (path: string) => {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  relay = await StandInRelay.start();
  machine = newMachine();
  user = machine.env['HOME']!;
  // Homebrew's bin, outside the home folder and the user's to write.
  brew = join(mkdtempSync(join(tmpdir(), 'latch-brew-')), 'bin');
  mkdirSync(brew);
  config = join(user, 'dotfiles', 'config');
  unwritable = ['/usr/bin', '/proc/sys'].find((folder) => !canWrite(folder));
  const files: Record<string, string> = {
    '.gitconfig': [
      '[user]',
      '\tname = Dev',
      '[include]',
      '\tpath = ~/.gitconfig.local',
      '[includeIf "gitdir:~/project/"]',
      '\tpath = .config/git-work.inc ; relative to this file',
    ].join('\n'),
    '.gitconfig.local': '[include] path = "~/dotfiles/git/more.inc"\n',
    'dotfiles/git/more.inc': '',
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(user, path, '..'), { recursive: true });
    writeFileSync(join(user, path), text);
  }
  machine.env = {
    ...machine.env,
    PATH: [brew, ...(unwritable ? [unwritable] : []), process.env['PATH']].join(':'),
    XDG_CONFIG_HOME: config,
    GIT_CONFIG_GLOBAL: join(user, 'git-global', 'config'),
    SHELL: '/opt/oil/bin/osh',
  };
  await initMachine(machine, { relay: relay.origin });
  phone = (await pairPhoneDirectly(machine, relay.origin)).phone;
  daemon = await startDaemon(machine);
  await relay.waitFor(() => relay.connected > 0);
});

afterAll(async () => {
  await daemon?.stop();
  await relay?.stop();
  rmSync(join(brew, '..'), { recursive: true, force: true });
});

/** What a Write of `path` gets: a phone asked (and denying it) at a risk, or the hook's answer alone. */
async function judgedWrite(path: string): Promise<{ asked: string } | { answered: unknown }> {
  const before = relay.requests.length;
  const answered = startHook(
    machine,
    hookInput('PreToolUse', 'Write', { file_path: path, content: '#!/bin/sh\n' }, { cwd: user }),
  );
  const first = await Promise.race([
    answered.then((ran) => ({ answered: ran.output })),
    relay.nextRequest(before).then((request) => ({ asked: request.risk })),
  ]);
  if ('asked' in first) {
    await relay.sendDenial(phone, relay.requests[before]!);
    expect((await answered).code).toBe(2);
  }
  return first;
}

describe('self-protection by who may write a place', () => {
  it.each([
    [
      'a program in a PATH folder outside the home folder the user may write (Homebrew’s)',
      () => join(brew, 'git'),
    ],
    ['`ls` there', () => join(brew, 'ls')],
    ['a file ~/.gitconfig includes', () => join(user, '.gitconfig.local')],
    ['a file an includeIf names, relative to ~/.gitconfig', () => join(user, '.config', 'git-work.inc')],
    ['a file an included file includes', () => join(user, 'dotfiles', 'git', 'more.inc')],
    ['git’s config in an XDG_CONFIG_HOME that is not ~/.config', () => join(config, 'git', 'config')],
    ['GIT_CONFIG_GLOBAL', () => join(user, 'git-global', 'config')],
    ['xonsh’s ~/.xonshrc', () => join(user, '.xonshrc')],
    ['xonsh’s rc.d', () => join(config, 'xonsh', 'rc.d', 'x.xsh')],
    ['nushell’s config.nu', () => join(config, 'nushell', 'config.nu')],
    ['nushell’s login.nu', () => join(config, 'nushell', 'login.nu')],
    ['ksh’s ~/.kshrc', () => join(user, '.kshrc')],
    ['mksh’s ~/.mkshrc', () => join(user, '.mkshrc')],
    ['elvish’s rc.elv', () => join(config, 'elvish', 'rc.elv')],
    ['PowerShell’s profile', () => join(config, 'powershell', 'Microsoft.PowerShell_profile.ps1')],
    ['the rc file of the shell SHELL names, one Latch does not know', () => join(user, '.oshrc')],
  ])('asks a phone at critical risk before a Write of %s', async (_name, path) => {
    expect(await judgedWrite(path())).toEqual({ asked: 'critical' });
  });

  const root = process.geteuid?.() === 0;
  it
    .runIf(root)
    .each([
      '/etc/claude-code/managed-settings.json',
      '/etc/claude-code/managed-settings.d/10-x.json',
      '/etc/claude-code/managed-mcp.json',
      '/etc/codex/config.toml',
      '/etc/codex/requirements.toml',
      '/etc/profile',
      '/etc/profile.d/x.sh',
      '/etc/bash.bashrc',
      '/etc/zsh/zshenv',
      '/etc/environment',
      '/etc/ld.so.preload',
      '/etc/gitconfig',
      '/etc/systemd/user/x.service',
      '/usr/local/bin/git',
      '/Library/Application Support/ClaudeCode/managed-settings.json',
    ])('as root, asks a phone at critical risk before a Write of the system’s %s', async (path) => {
    // Only judged: the phone denies it, and nothing is written.
    expect(await judgedWrite(path)).toEqual({ asked: 'critical' });
  });

  it('leaves a Write in a PATH folder the user cannot write to the policy (deferred, no phone)', async (context) => {
    if (unwritable === undefined) return context.skip();
    expect(await judgedWrite(join(unwritable, 'git'))).toEqual({
      answered: { hookSpecificOutput: expect.objectContaining({ permissionDecision: 'ask' }) },
    });
  });
});
