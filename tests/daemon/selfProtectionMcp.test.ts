import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfProtection, type Guard, type ProtectedCall } from '../../daemon/policy/selfProtection.ts';
import {
  at,
  expected,
  home,
  judged,
  makeProtectedHome,
  mcp,
  places,
  removeProtectedHome,
  tool,
} from '../support/protectedHome.ts';

beforeAll(makeProtectedHome);
afterAll(removeProtectedHome);

describe('self-protection: MCP and unknown tools', () => {
  it.each<[string, () => ProtectedCall, Guard | undefined]>([
    ['reading the secret', () => mcp('mcp__fs__read_file', { path: 'H/.latch/totp.json' }), 'secrets'],
    ['reading it by ~', () => mcp('mcp__fs__read_file', { path: '~/.latch/host-token' }), 'secrets'],
    [
      'reading it with input that is not all strings',
      () =>
        mcp('mcp__fs__read_file', { limit: 10, encoding: null, follow: true, path: 'H/.latch/totp.json' }),
      'secrets',
    ],
    [
      'naming it in nested input',
      () => mcp('mcp__x__y', { files: [{ from: 'a', to: ['H/.latch/state.db'] }] }),
      'secrets',
    ],
    [
      'naming it in prose',
      () => mcp('mcp__fs__write_file', { path: '/tmp/x', content: 'see ~/.latch/totp.json' }),
      'secrets',
    ],
    [
      'reading it as a percent-encoded file URI (a resource, a fetch tool)',
      () => mcp('mcp__fs__resources/read', { uri: 'file://H/%2Elatch%2F%74otp.json' }),
      'secrets',
    ],
    [
      'reading it as a twice-encoded file URI with a host',
      () => mcp('ReadMcpResourceTool', { server: 'fs', uri: 'file://localhost/H/%252elatch%252Fhost-token' }),
      'secrets',
    ],
    [
      'reading it through a link, named by a file URI (its path is followed)',
      () => mcp('mcp__fs__resources/read', { uri: `file://${at('P/conf/config.toml')}` }),
      'files',
    ],
    [
      'naming it with a tab inside, which URL parsers drop',
      () => mcp('mcp__fs__resources/read', { uri: 'file://H/.la\ttch/host-to\tken' }),
      'secrets',
    ],
    [
      'naming it with a line break and a leading space, encoded',
      () => mcp('mcp__fs__resources/read', { uri: ' file://H/%2Elatch/host-k%0Aey.json' }),
      'secrets',
    ],
    [
      'a file URL without slashes, with backslashes, through a link',
      () =>
        mcp('mcp__fs__resources/read', { uri: `fi\tle:${at('P/conf/config.toml').replaceAll('/', '\\')}` }),
      'files',
    ],
    [
      'naming it as a member’s name',
      () => mcp('mcp__fs__read_files', { files: { 'H/.latch/host-key.json': true } }),
      'secrets',
    ],
    [
      'naming hook settings as a member’s name',
      () => mcp('mcp__fs__write_files', { files: { '~/.claude/settings.json': '{}' } }),
      'hooks',
    ],
    [
      'a percent escape that is not UTF-8 beside the name',
      () => mcp('mcp__fs__read_file', { path: 'H/%FF/../%2elatch/st%61te.db' }),
      'secrets',
    ],
    [
      'writing Claude Code’s settings',
      () => mcp('mcp__fs__write_file', { path: '~/.claude/settings.json' }),
      'hooks',
    ],
    [
      'reading Latch’s config (a tool Latch does not know may write)',
      () => mcp('mcp__fs__read_file', { path: 'H/.latch/config.toml' }),
      'files',
    ],
    [
      'a path with spaces',
      () => mcp('mcp__fs__write_file', { path: 'H/.claude/settings.json', content: 'a b' }),
      'hooks',
    ],
    ['an SDK call naming a path', () => ({ tool: 'deploy', paths: [at('H/.latch/policy.toml')] }), 'files'],
    [
      'a long input naming the secret between 20 kB of padding',
      () =>
        mcp('mcp__fs__write_file', {
          a: 'x'.repeat(10_000),
          path: '~/.latch/totp.json',
          b: 'y'.repeat(10_000),
        }),
      'secrets',
    ],
    [
      'a long input whose path reaches Latch’s home through a link',
      () => mcp('mcp__fs__write_file', { content: 'x'.repeat(20_000), path: at('P/conf/config.toml') }),
      'files',
    ],
    [
      'a long input whose command moves an agent’s folder away (more than is read as words: asked)',
      () => mcp('mcp__shell__run', { cmd: 'mv ~/.codex /tmp/old-codex', pad: ' '.repeat(17_000) }),
      'files',
    ],
    [
      'a long input that names nothing of Latch’s: asked all the same',
      () => mcp('mcp__fs__write_file', { path: at('P/big.txt'), content: 'x'.repeat(20_000) }),
      'files',
    ],
    [
      'input that is not JSON (an SDK call may send any text)',
      () => ({
        tool: 'mcp__fs__read_file',
        paths: [],
        input: `{"path": "${home}/.latch/totp.json", "x": "…`,
      }),
      'secrets',
    ],
    ['reading the project', () => mcp('mcp__fs__read_file', { path: at('P/README.md') }), undefined],
    // Review R1: a folder above Latch's files, which the tool may act on whole.
    [
      'deleting the home folder',
      () => mcp('mcp__filesystem__delete_directory', { path: '~', recursive: true }),
      'files',
    ],
    ['copying the home folder', () => mcp('mcp__fs__copy', { source: home, destination: '/tmp/x' }), 'files'],
    [
      'searching every file from the root',
      () => mcp('mcp__ripgrep__search', { path: '/', pattern: 'BEGIN', hidden: true }),
      'files',
    ],
    ['listing the project', () => mcp('mcp__fs__list_directory', { path: at('P') }), undefined],
    ['listing the home folder', () => mcp('mcp__fs__list_directory', { path: '~' }), undefined],
    ['a remote repository’s root', () => mcp('mcp__github__get_file_contents', { path: '/' }), undefined],
    // A tool whose name does not say it only looks may act on the tree (review Zg): a message that
    // is only `/` is asked about too, the price of not knowing what a tool does with a folder.
    ['a message that is a slash', () => mcp('mcp__slack__post', { text: '/' }), 'files'],
    ['a tool that looks and deletes', () => mcp('mcp__fs__get_and_delete', { path: '~' }), 'files'],
    ['a look word in the server’s name', () => mcp('mcp__fetch__delete', { path: '~' }), 'files'],
    ['an archive of a folder', () => mcp('mcp__fs__get_archive', { path: '~' }), 'files'],
    ['a listing that goes deep', () => mcp('mcp__fs__list_directory', { path: '~', depth: 5 }), 'files'],
    ['moving the home folder', () => mcp('mcp__fs__mv', { source: home, destination: '/tmp/h' }), 'files'],
    ['trashing the home folder', () => mcp('mcp__fs__trash', { path: '~' }), 'files'],
    ['reading a tree, by its name', () => mcp('mcp__fs__read_directory_recursive', { path: '~' }), 'files'],
    [
      'listing that goes down the tree, by its input',
      () => mcp('mcp__fs__list_directory', { path: '~', recurse: 'true' }),
      'files',
    ],
    [
      'reading the project by a file URI',
      () => mcp('mcp__fs__resources/read', { uri: `file://${at('P/README%2Emd')}` }),
      undefined,
    ],
    [
      'a search that mentions latch',
      () => mcp('mcp__github__search', { query: 'latch kill switch design' }),
      undefined,
    ],
    // What a shell or exec server runs, under whatever name its server gives the command.
    [
      'stopping the daemon, the command under another name',
      () => ({ ...mcp('mcp__shell__run', { cmd: 'kill 4242' }), cwd: at('P') }),
      'stop',
    ],
    [
      'stopping the daemon, the command as an argv',
      () => ({ ...mcp('mcp__shell__exec', { args: ['kill', '4242'] }), cwd: at('P') }),
      'stop',
    ],
    [
      'a debugger aimed at the daemon: asked, not refused (a string read as a command may be prose)',
      () => ({ ...mcp('mcp__shell__exec', { argv: ['gdb', '-p', '4242'] }), cwd: at('P') }),
      'files',
    ],
    [
      'a program and its arguments in two members',
      () => ({
        ...mcp('mcp__shell__exec', { command: 'systemctl', args: ['--user', 'stop', 'latch'] }),
        cwd: at('P'),
      }),
      'stop',
    ],
    [
      'an issue whose text reads as a debugger command',
      () => ({
        ...mcp('mcp__linear__create_issue', { description: 'Debug with strace -p $(pgrep -f node)' }),
        cwd: at('P'),
      }),
      'files',
    ],
    [
      'an agent started unhooked',
      () => mcp('mcp__shell__run', { script: `claude --settings '{"disableAllHooks":true}' -p hi` }),
      'hooks',
    ],
    ['code scheduled to run later', () => mcp('mcp__shell__run', { commandLine: 'crontab /tmp/x' }), 'hooks'],
    [
      'a bare cd, then a start-up file',
      () => mcp('mcp__shell__run', { code: 'cd && cp /tmp/x .bashrc' }),
      'hooks',
    ],
    // What a file server writes, under whatever name its server gives the path.
    [
      'a subagent moved into a project’s .claude',
      () => mcp('mcp__fs__move_file', { source: '/tmp/x.md', destination: at('P/.claude/agents/x.md') }),
      'hooks',
    ],
    [
      'a hook script written by a relative path in a nested member',
      () => mcp('mcp__fs__write', { file: { target: '.claude/hooks/x.sh' } }),
      'hooks',
    ],
    [
      'a start-up file above the folder the hook was told (the server’s own folder is not told)',
      () => ({ ...mcp('mcp__fs__write_file', { path: '../.bashrc', content: 'x' }), cwd: at('P/src') }),
      'hooks',
    ],
    [
      'a file above the folder the hook was told, which is nothing of Latch’s',
      () => ({ ...mcp('mcp__fs__write_file', { path: '../README.md', content: 'x' }), cwd: at('P/src') }),
      undefined,
    ],
    [
      'a query whose * is no glob',
      () => ({ ...mcp('mcp__pg__query', { sql: 'select * from users' }), cwd: at('P') }),
      undefined,
    ],
    ['a folder of the project', () => mcp('mcp__git__git_status', { repo_path: at('P') }), undefined],
    [
      'TodoWrite, which touches no file',
      () => ({
        tool: 'TodoWrite',
        paths: [],
        input: JSON.stringify({ todos: [{ content: 'chmod ~/.latch/totp.json' }] }),
      }),
      undefined,
    ],
    [
      'Write, judged by its path, not its content',
      () => ({
        ...tool('Write', 'P/docs/security.md'),
        input: JSON.stringify({ content: 'cat ~/.latch/totp.json' }),
      }),
      undefined,
    ],
  ])('%s', (_name, call, guard) => {
    expect(judged(call())).toEqual(expected(guard));
  });
});

/** A known tool's call with a URL (WebFetch's `url`), from the project. */
const fetched = (url: string, name = 'WebFetch'): ProtectedCall => ({
  ...mcp(name, { url, prompt: 'summarise it' }),
  cwd: at('P'),
});

describe('self-protection: a known tool’s URL that names a file here (review kc)', () => {
  it.each<[string, () => ProtectedCall, Guard | undefined]>([
    ['a file URL of the secret', () => fetched('file://H/.latch/totp.json'), 'secrets'],
    ['a percent-encoded file URL', () => fetched('file://H/%2Elatch%2F%74otp.json'), 'secrets'],
    [
      'a twice-encoded file URL with a host',
      () => fetched('file://localhost/H/%252elatch%252Fhost-token'),
      'secrets',
    ],
    [
      'a file URL with a tab and a leading space',
      () => fetched(' FILE://H/.la\ttch/host-key.json'),
      'secrets',
    ],
    ['a file URL through a link to the secret', () => fetched(`file://${at('P/x')}`), 'secrets'],
    // Read as Read reads a path: Latch's other files are the policy's to judge.
    ['a file URL of Latch’s config', () => fetched('file://H/.latch/config.toml'), undefined],
    ['a web page', () => fetched('https://docs.example.com/guide'), undefined],
    [
      'a web page whose path spells a secret’s name',
      () => fetched('https://example.com/.latch/totp.json'),
      undefined,
    ],
  ])('%s', (_name, call, guard) => {
    expect(judged(call())).toEqual(expected(guard));
  });

  it('refuses it with the secret’s name as its target', () => {
    expect(selfProtection(fetched('file://H/%2Elatch/totp.json'), places)).toEqual({
      action: 'deny',
      risk: 'critical',
      rule: 'latch: its secrets',
      target: 'totp.json',
      reaches: `${home}/.latch/totp.json`,
    });
  });
});
