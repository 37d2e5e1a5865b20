import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { includedPaths } from '../../daemon/policy/gitConfigFiles.ts';
import { protectedPlaces, type ProtectedPlaces } from '../../daemon/policy/protectedPlaces.ts';
import { selfProtection } from '../../daemon/policy/selfProtection.ts';

// The system's places, under a root of the test's own that its user may write, as root may
// write /: guarded as the real ones are, whoever runs the test. A place the user cannot write is
// left out, as the system's are for a user who is not root.
let root: string;
let home: string;
let system: string;
let places: ProtectedPlaces;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'latch-writable-'));
  home = join(root, 'home');
  system = join(root, 'system');
  for (const folder of [
    'etc',
    'opt/homebrew/bin',
    'usr/local/bin',
    'home/linuxbrew/.linuxbrew/bin',
    'Library',
  ])
    mkdirSync(join(system, folder), { recursive: true });
  mkdirSync(home);
  // A system-wide git config that pulls in another file.
  writeFileSync(
    join(system, 'etc', 'gitconfig'),
    `[include]\n\tpath = ${join(system, 'etc', 'git-site.inc')}\n`,
  );
  places = protectedPlaces({ HOME: home, PATH: '/usr/bin:/bin' }, 4242, [], system);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const written = (path: string, on = places) =>
  selfProtection({ tool: 'Write', paths: [join(system, path)], cwd: home }, on);

describe('the system’s places, where the daemon’s user may write them', () => {
  it.each([
    ['Claude Code’s managed settings', 'etc/claude-code/managed-settings.json', 'latch: agent hook settings'],
    [
      'a managed settings drop-in',
      'etc/claude-code/managed-settings.d/10-x.json',
      'latch: agent hook settings',
    ],
    ['Claude Code’s managed MCP servers', 'etc/claude-code/managed-mcp.json', 'latch: agent hook settings'],
    [
      'macOS’s managed settings',
      'Library/Application Support/ClaudeCode/managed-settings.json',
      'latch: agent hook settings',
    ],
    ['Codex’s system config', 'etc/codex/managed_config.toml', 'latch: agent hook settings'],
    ['/etc/profile', 'etc/profile', 'latch: agent hook settings'],
    ['a file in /etc/profile.d', 'etc/profile.d/x.sh', 'latch: agent hook settings'],
    ['/etc/bash.bashrc', 'etc/bash.bashrc', 'latch: agent hook settings'],
    ['zsh’s system files', 'etc/zsh/zshrc', 'latch: agent hook settings'],
    ['/etc/environment', 'etc/environment', 'latch: agent hook settings'],
    ['the system’s git config', 'etc/gitconfig', 'latch: agent hook settings'],
    ['a file the system’s git config includes', 'etc/git-site.inc', 'latch: agent hook settings'],
    ['/etc/ld.so.preload', 'etc/ld.so.preload', 'latch: its own files'],
    ['a user unit every user’s systemd starts', 'etc/systemd/user/x.service', 'latch: its own files'],
    ['Homebrew’s bin, not on the daemon’s PATH', 'opt/homebrew/bin/git', 'latch: its own files'],
    ['a chowned /usr/local/bin', 'usr/local/bin/node', 'latch: its own files'],
    ['Linuxbrew’s bin', 'home/linuxbrew/.linuxbrew/bin/git', 'latch: its own files'],
  ])('guards %s', (_what, path, rule) => {
    expect(written(path)).toMatchObject({ action: 'ask', risk: 'critical', rule });
  });

  it('leaves a file beside them that runs nothing to the policy', () => {
    expect(written('etc/hostname')).toBeUndefined();
    expect(written('opt/homebrew/README.md')).toBeUndefined();
  });

  it.runIf(process.geteuid?.() !== 0)('leaves out what the user cannot write (not as root)', () => {
    const locked = join(root, 'locked');
    mkdirSync(join(locked, 'etc'), { recursive: true });
    mkdirSync(join(locked, 'opt/homebrew/bin'), { recursive: true });
    chmodSync(join(locked, 'opt/homebrew/bin'), 0o555);
    chmodSync(join(locked, 'etc'), 0o555);
    const lockedPlaces = protectedPlaces({ HOME: home, PATH: '/usr/bin:/bin' }, 4242, [], locked);
    const at = (path: string) =>
      selfProtection({ tool: 'Write', paths: [join(locked, path)], cwd: home }, lockedPlaces);
    expect(at('etc/claude-code/managed-settings.json')).toBeUndefined();
    expect(at('opt/homebrew/bin/git')).toBeUndefined();
  });

  it.runIf(process.geteuid?.() !== 0)(
    'follows the includes of a system git config the user cannot write to a file the user can (not as root)',
    () => {
      const locked = join(root, 'locked-git');
      mkdirSync(join(locked, 'etc'), { recursive: true });
      const site = join(home, 'site.inc');
      writeFileSync(join(locked, 'etc', 'gitconfig'), `[include]\n\tpath = ${site}\n`);
      chmodSync(join(locked, 'etc', 'gitconfig'), 0o444);
      chmodSync(join(locked, 'etc'), 0o555);
      const lockedPlaces = protectedPlaces({ HOME: home, PATH: '/usr/bin:/bin' }, 4242, [], locked);
      expect(selfProtection({ tool: 'Write', paths: [site], cwd: home }, lockedPlaces)).toMatchObject({
        action: 'ask',
        risk: 'critical',
      });
    },
  );

  it('guards a file ~user/ names in an include, the user’s home read from the system’s passwd', () => {
    const other = join(root, 'users', 'dev');
    const withUser = join(root, 'with-user');
    mkdirSync(join(withUser, 'etc'), { recursive: true });
    writeFileSync(
      join(withUser, 'etc', 'passwd'),
      `root:x:0:0:root:/root:/bin/sh\ndev:x:1001:1001::${other}:/bin/sh\n`,
    );
    const userHome = join(root, 'user-home');
    mkdirSync(userHome);
    writeFileSync(
      join(userHome, '.gitconfig'),
      '[include]\n\tpath = ~dev/shared.inc\n\tpath = /etc/\\\ncontinued.inc\n',
    );
    const on = protectedPlaces({ HOME: userHome, PATH: '/usr/bin:/bin' }, 4242, [], withUser);
    for (const path of [join(other, 'shared.inc'), '/etc/continued.inc'])
      expect(selfProtection({ tool: 'Write', paths: [path], cwd: userHome }, on), path).toMatchObject({
        action: 'ask',
        risk: 'critical',
        rule: 'latch: agent hook settings',
      });
    // A file beside it is nothing of git's.
    expect(
      selfProtection({ tool: 'Write', paths: [join(other, 'notes.md')], cwd: userHome }, on),
    ).toBeUndefined();
  });

  it('takes no `/` on PATH for a folder of programs: every file tool’s write would ask', () => {
    const withRoot = protectedPlaces({ HOME: home, PATH: '/:/usr/bin' }, 4242, [], system);
    expect(withRoot.places.some(({ path }) => path === '/')).toBe(false);
    expect(
      selfProtection({ tool: 'Write', paths: ['/srv/app/notes.md'], cwd: home }, withRoot),
    ).toBeUndefined();
  });
});

describe('places found by their whole path only', () => {
  it('asks nothing of a command from an unknown folder that names git, codex, xonsh or profile as words', () => {
    const withShells = protectedPlaces(
      { HOME: home, PATH: '/usr/bin:/bin', SHELL: '/usr/bin/xonsh' },
      4242,
      [],
      system,
    );
    for (const command of [
      'git config user.name x && git status',
      'codex exec task',
      'xonsh -c "ls"',
      'nu -c "ls"',
      'cat config',
      'cat profile environment',
    ])
      expect(
        selfProtection({ tool: 'exec', paths: [], command, cwd: home, folderUnsure: true }, withShells),
        command,
      ).toBeUndefined();
  });
});

describe('the files a git config includes', () => {
  it('reads include.path and includeIf.*.path as git does: quotes, comments, ~, relative to the file', () => {
    const text = [
      '[user]',
      '\tpath = /not/an/include',
      '[include]',
      '\tpath = ~/.gitconfig.local',
      '\tPath = "with space.inc" # a comment',
      '[includeIf "gitdir:~/work/"]',
      '\tpath = ../shared/work.inc ; another',
      '[include] path = /same/line.inc',
      '[core]',
      '\tpath = /not/either',
    ].join('\n');
    expect(includedPaths(text, '/home/me/dotfiles/gitconfig', '/home/me')).toEqual([
      '/home/me/.gitconfig.local',
      '/home/me/dotfiles/with space.inc',
      '/home/me/shared/work.inc',
      '/same/line.inc',
    ]);
  });

  it('reads ~user/ as that user’s home folder, as git does (getpwnam)', () => {
    const text = '[include]\n\tpath = ~dev/.gitconfig.dev\n\tpath = ~root\n\tpath = ~/x.inc\n';
    const homes: Record<string, string> = { dev: '/srv/users/dev', root: '/var/root' };
    expect(includedPaths(text, '/home/me/.gitconfig', '/home/me', (user) => homes[user])).toEqual([
      '/srv/users/dev/.gitconfig.dev',
      '/var/root',
      '/home/me/x.inc',
    ]);
  });

  it('joins a value a backslash continues on the next line, as git does', () => {
    const text = [
      '[include]',
      '\tpath = /some/\\',
      '  file.inc',
      '\tpath = /a/\\',
      'b.inc ; a comment',
      '[includeIf "gitdir:~/work/"]',
      '\tpath = "/quoted/\\',
      'c.inc"',
      '[core]',
      '\tpath = /not/\\',
      'an/include',
    ].join('\n');
    expect(includedPaths(text, '/home/me/.gitconfig', '/home/me')).toEqual([
      '/some/  file.inc',
      '/a/b.inc',
      '/quoted/c.inc',
    ]);
  });

  it('ends an include path at a NUL, as git’s C strings do, not failing on it (review rv10a)', () => {
    const text = '[include]\n\tpath = ~dev/a.inc\0/../x\n\tpath = ~d\0ev/b.inc\n\tpath = \0\n';
    const homes: Record<string, string> = { dev: '/srv/dev', d: '/srv/d' };
    expect(includedPaths(text, '/home/me/.gitconfig', '/home/me', (user) => homes[user])).toEqual([
      '/srv/dev/a.inc',
      '/srv/d',
    ]);
  });

  it('reads a header that never closes, after a long run of spaces or name characters, in linear time (review rv10a)', () => {
    // Each was seconds to a minute with a pattern that tried every split of the run; a test may
    // not time it, so the runs are long enough to hang the test's own timeout were it so.
    const spaces = `[${' '.repeat(200_000)}\n[include]\n\tpath = /after/spaces.inc\n`;
    const name = `[${'a'.repeat(100_000)}${' '.repeat(100_000)}\n[include]\n\tpath = /after/name.inc\n`;
    expect(includedPaths(spaces, '/home/me/.gitconfig', '/home/me')).toEqual(['/after/spaces.inc']);
    expect(includedPaths(name, '/home/me/.gitconfig', '/home/me')).toEqual(['/after/name.inc']);
  });
});
