import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protectedPlaces, type ProtectedPlaces } from '../../daemon/policy/protectedPlaces.ts';
import { selfProtection } from '../../daemon/policy/selfProtection.ts';

// What a login shell runs before Latch's hook beyond its own start-up files: what they source,
// as rustup, uv, Debian's .bashrc and a zsh kept in ~/.config set them up.
let root: string;
let home: string;
let places: ProtectedPlaces;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'latch-startup-'));
  home = join(root, 'home');
  const files: Record<string, string> = {
    '.profile': [
      'if [ -n "$BASH_VERSION" ]; then',
      '    if [ -f "$HOME/.bashrc" ]; then',
      '\t. "$HOME/.bashrc"',
      '    fi',
      'fi',
      '. "$HOME/.cargo/env"',
    ].join('\n'),
    '.bashrc': [
      '[ -f ~/.bash_aliases ] && . ~/.bash_aliases',
      'for f in ~/.bashrc.d/*.sh; do . "$f"; done',
      'source ~/.local/bin/env',
    ].join('\n'),
    '.local/bin/env': '. ~/.config/uv/more.sh',
    // A loop over a pattern in the home folder sources what it matches, not the whole home; a
    // loop that sources nothing names nothing; a brace list names each file.
    '.zshrc': [
      'for f in $HOME/.*_aliases; do . "$f"; done',
      'for key in ~/.ssh/id_*; do echo "$key"; done',
      'for file in ~/.{path,exports}; do [ -r "$file" ] && builtin source "$file"; done',
      '# . ~/.commented-out',
      'export ZSH="$HOME/.oh-my-zsh"',
      'source $ZSH/oh-my-zsh.sh',
    ].join('\n'),
    '.oh-my-zsh/oh-my-zsh.sh': 'for config_file ("$ZSH_CUSTOM"/*.zsh(N)); do source "$config_file"; done',
    '.git_aliases': '',
    '.zshenv': 'export ZDOTDIR=$HOME/.config/zsh',
    '.cargo/env': '',
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(home, path, '..'), { recursive: true });
    writeFileSync(join(home, path), text);
  }
  places = protectedPlaces({ HOME: home }, 4242, []);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const written = (path: string) =>
  selfProtection({ tool: 'Write', paths: [join(home, path)], cwd: home }, places);

describe('the files a shell start-up file sources', () => {
  it('reads no FIFO a start-up file sources (it would hold the daemon’s start)', () => {
    const fifoHome = join(root, 'fifo-home');
    mkdirSync(fifoHome);
    writeFileSync(join(fifoHome, '.profile'), '. ~/pipe');
    execFileSync('mkfifo', [join(fifoHome, 'pipe')]);
    const fifoPlaces = protectedPlaces({ HOME: fifoHome }, 4242, []);
    expect(fifoPlaces.places.some((place) => place.path === join(fifoHome, 'pipe'))).toBe(true);
  });

  it.each([
    ['one sourced if it exists, not there yet', '.bash_aliases'],
    ['a folder a loop sources from', '.bashrc.d/x.sh'],
    ['what a file sourced by a sourced file (uv) sources', '.config/uv/more.sh'],
    ['zsh’s files in the ZDOTDIR .zshenv sets', '.config/zsh/.zprofile'],
    ['the same for .zshrc', '.config/zsh/.zshrc'],
    ['a file a pattern loop in the home folder sources', '.git_aliases'],
    ['a file of a brace list a loop sources', '.exports'],
    [
      'a fish function, which fish loads before any other when config.fish calls it (review sb)',
      '.config/fish/functions/ls.fish',
    ],
  ])('guards %s', (_what, path) => {
    expect(written(path)).toMatchObject({
      action: 'ask',
      risk: 'critical',
      rule: 'latch: agent hook settings',
    });
  });

  it.each([
    ['a file in the config folder beside a sourced folder', '.config/notes.txt'],
    ['a file in the ZDOTDIR that zsh does not read', '.config/zsh/notes.txt'],
    ['a project beside a pattern loop in the home folder', 'project/src/index.ts'],
    ['a key a loop only echoes', '.ssh/id_x'],
    ['a file a comment sources', '.commented-out'],
  ])('leaves %s to the policy', (_what, path) => {
    expect(written(path)).toBeUndefined();
  });

  it.each([
    ['any program in ~/.local/bin, which runs in place of the one its name meant', '.local/bin/id'],
    ['a program in ~/bin', 'bin/ls'],
    // A framework loads from beside the file sourced, by names only running tells.
    ['a file .profile sources (rustup), in a framework’s folder', '.cargo/env'],
    ['a program beside a sourced file (rustup’s cargo)', '.cargo/bin/cargo'],
    ['a plugin of oh-my-zsh, which oh-my-zsh.sh loads by a zsh loop', '.oh-my-zsh/custom/alias.zsh'],
  ])('guards %s, written by a file tool (review sb)', (_what, path) => {
    expect(written(path)).toMatchObject({ action: 'ask', risk: 'critical', rule: 'latch: its own files' });
  });

  it('guards a file sourced from ~/.local/bin (uv’s env)', () => {
    expect(written('.local/bin/env')).toMatchObject({ action: 'ask', risk: 'critical' });
  });

  it('leaves a command that only names such a folder to the policy: reading crates, listing programs (review rw)', () => {
    for (const command of [
      'cat ~/.cargo/registry/src/x/lib.rs',
      'ls ~/.local/bin',
      'export PATH="$HOME/.local/bin:$PATH"',
    ])
      expect(
        selfProtection({ tool: 'Bash', paths: [], command, cwd: home }, places),
        command,
      ).toBeUndefined();
  });
});
