import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LONG_COMMAND_BYTES, type Verdict } from '../../daemon/policy/policy.ts';
import { protectedPlaces, type ProtectedPlaces } from '../../daemon/policy/protectedPlaces.ts';
import {
  SELF_PROTECTION_RULES,
  selfProtection,
  type Guard,
  type ProtectedCall,
} from '../../daemon/policy/selfProtection.ts';

/** The daemon's pid, as the places are told it. */
const DAEMON_PID = 4242;

/**
 * A user's home with Latch set up in ~/.latch, Claude Code's and Codex's settings, a project
 * with hook settings of its own, and links an agent could have made into Latch's home.
 */
let root: string;
let home: string;
let project: string;
let places: ProtectedPlaces;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'latch-self-protection-'));
  home = join(root, 'home');
  project = join(home, 'project');
  // paths.ts and agentConfigDir read the home folder from the environment, as the daemon does.
  vi.stubEnv('HOME', home);
  const files = {
    '.latch/config.toml': '',
    '.latch/policy.toml': '',
    '.latch/audit.log': '',
    '.latch/totp.json': '{"secret":"x"}',
    '.latch/host-key.json': '{}',
    '.latch/host-token': 'x',
    '.latch/state.db': '',
    '.latch/run/.keep': '',
    '.claude/settings.json': '{}',
    '.claude/commands/review.md': '',
    '.codex/hooks.json': '{}',
    'project/README.md': '',
    'project/package.json': '{}',
    'project/src/latch.ts': '',
    'project/.claude/settings.json': '{}',
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(home, path, '..'), { recursive: true });
    writeFileSync(join(home, path), text);
  }
  symlinkSync(join(home, '.latch/totp.json'), join(project, 'x'));
  symlinkSync(join(home, '.latch'), join(project, 'conf'));
  symlinkSync(join(home, '.claude/settings.json'), join(project, 'claude-link'));
  // Links to where a file would be: writing through one creates it.
  symlinkSync(join(home, '.latch/state.db-wal'), join(project, 'wal'));
  symlinkSync(join(home, '.latch/policy.toml.new'), join(project, 'new-policy'));
  places = protectedPlaces({ HOME: home }, DAEMON_PID);
});

afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(root, { recursive: true, force: true });
});

const expected = (guard: Guard | undefined): Verdict | undefined =>
  guard && {
    action: guard === 'secrets' ? 'deny' : 'ask',
    risk: 'critical',
    rule: SELF_PROTECTION_RULES[guard],
  };

/** What a call is judged to touch, without its target (asserted apart). */
function judged(call: ProtectedCall, on: ProtectedPlaces = places): Omit<Verdict, 'target'> | undefined {
  const verdict = selfProtection(call, on);
  if (!verdict) return undefined;
  const { target: _target, ...rest } = verdict;
  return rest;
}

// `H/` in a case stands for the home folder, `P/` for the project: both are made at run time.
const withHome = (text: string) => text.replace(/(?<![\w$])H(?=\/|$)/g, home);
const at = (path: string) => withHome(path).replace(/^P(?=\/|$)/, project);
const tool = (name: string, path: string): ProtectedCall => ({ tool: name, paths: [at(path)], cwd: project });
const bash = (command: string): ProtectedCall => ({
  tool: 'Bash',
  paths: [],
  command: withHome(command),
  cwd: project,
});
const mcp = (name: string, input: unknown): ProtectedCall => ({
  tool: name,
  paths: [],
  input: withHome(JSON.stringify(input)),
});

describe('self-protection: tools that read', () => {
  it.each<[string, () => ProtectedCall, Guard | undefined]>([
    ['Read of the TOTP secret', () => tool('Read', 'H/.latch/totp.json'), 'secrets'],
    ['Read of the host key', () => tool('Read', 'H/.latch/host-key.json'), 'secrets'],
    ['Read of the relay’s VAPID keys', () => tool('Read', 'H/.latch/relay/relay-secrets.json'), 'secrets'],
    ['Read of the host token, relative to the cwd', () => tool('Read', '../.latch/host-token'), 'secrets'],
    ['Read of the state database’s WAL', () => tool('Read', 'H/.latch/state.db-wal'), 'secrets'],
    ['Read of ~/.latch/state.db, ~ expanded', () => tool('Read', '~/.latch/state.db'), 'secrets'],
    ['Read of $HOME/.latch/totp.json', () => tool('Read', '$HOME/.latch/totp.json'), 'secrets'],
    ['Read of ${HOME}/.latch/totp.json', () => tool('Read', '${HOME}/.latch/totp.json'), 'secrets'],
    ['Read of the secret in another case', () => tool('Read', 'H/.LATCH/TOTP.JSON'), 'secrets'],
    ['Read through a link to the secret', () => tool('Read', 'x'), 'secrets'],
    ['Read through a linked folder', () => tool('Read', 'P/conf/totp.json'), 'secrets'],
    ['Read through .. after a linked folder', () => tool('Read', 'P/conf/../.latch/totp.json'), 'secrets'],
    ['Read through a link to a secret not written yet', () => tool('Read', 'wal'), 'secrets'],
    ['NotebookRead of the secret', () => tool('NotebookRead', 'H/.latch/totp.json'), 'secrets'],
    ['LS of the secret', () => tool('LS', 'H/.latch/totp.json'), 'secrets'],
    ['Glob in the secret', () => tool('Glob', 'H/.latch/host-token'), 'secrets'],
    ['Grep through Latch’s home, which reads the secrets in it', () => tool('Grep', 'H/.latch'), 'secrets'],
    ['Grep from above Latch’s home', () => tool('Grep', 'H'), 'files'],
    ['Grep in the project', () => tool('Grep', 'P'), undefined],
    ['Read of ~/.latch/policy.toml', () => tool('Read', 'H/.latch/policy.toml'), undefined],
    ['Read of ~/.latch/config.toml', () => tool('Read', 'H/.latch/config.toml'), undefined],
    ['Read of the audit log', () => tool('Read', 'H/.latch/audit.log'), undefined],
    ['LS of Latch’s home', () => tool('LS', 'H/.latch'), undefined],
    ['Glob in Latch’s home', () => tool('Glob', 'H/.latch'), undefined],
    ['Read of Claude Code’s settings', () => tool('Read', 'H/.claude/settings.json'), undefined],
    ['Read of the project’s hook settings', () => tool('Read', 'P/.claude/settings.json'), undefined],
    ['Read ./src/latch.ts', () => tool('Read', './src/latch.ts'), undefined],
    ['Read of a file named like a secret elsewhere', () => tool('Read', 'P/totp.json'), undefined],
    ['Read of a folder that only starts like Latch’s', () => tool('Read', 'H/.latch2/totp.json'), undefined],
  ])('%s', (_name, call, guard) => {
    expect(judged(call())).toEqual(expected(guard));
  });
});

describe('self-protection: tools that write', () => {
  it.each<[string, () => ProtectedCall, Guard | undefined]>([
    ['Edit of the policy', () => tool('Edit', 'H/.latch/policy.toml'), 'files'],
    ['Write of the config', () => tool('Write', 'H/.latch/config.toml'), 'files'],
    ['Write of a new file in Latch’s home', () => tool('Write', 'H/.latch/new.txt'), 'files'],
    ['NotebookEdit in the socket’s folder', () => tool('NotebookEdit', 'H/.latch/run/x.ipynb'), 'files'],
    ['Write of the TOTP secret', () => tool('Write', 'H/.latch/totp.json'), 'secrets'],
    ['Write through a linked folder', () => tool('Write', 'conf/config.toml'), 'files'],
    ['MultiEdit of Claude Code’s settings', () => tool('MultiEdit', 'H/.claude/settings.json'), 'hooks'],
    ['Write of Claude Code’s local settings', () => tool('Write', 'H/.claude/settings.local.json'), 'hooks'],
    ['Write of Codex’s hooks', () => tool('Write', 'H/.codex/hooks.json'), 'hooks'],
    ['Edit of Codex’s config', () => tool('Edit', 'H/.codex/config.toml'), 'hooks'],
    ['Edit of the project’s settings', () => tool('Edit', '.claude/settings.json'), 'hooks'],
    ['Write of the project’s local settings', () => tool('Write', 'P/.claude/settings.local.json'), 'hooks'],
    ['Write of a project’s Codex hooks', () => tool('Write', '/srv/app/.codex/hooks.json'), 'hooks'],
    ['Write through a link to the settings', () => tool('Write', 'claude-link'), 'hooks'],
    ['Write through a link to a file not made yet', () => tool('Write', 'new-policy'), 'files'],
    ['Write of a Claude Code command', () => tool('Write', 'H/.claude/commands/deploy.md'), undefined],
    ['Write in the project', () => tool('Write', 'P/src/latch.ts'), undefined],
    [
      'Edit of a file named settings.json elsewhere',
      () => tool('Edit', 'P/.vscode/settings.json'),
      undefined,
    ],
    ['Write of a folder that only starts like Latch’s', () => tool('Write', 'H/.latch2/x'), undefined],
  ])('%s', (_name, call, guard) => {
    expect(judged(call())).toEqual(expected(guard));
  });
});

describe('self-protection: commands', () => {
  it.each<[string, Guard | undefined]>([
    // Secrets, however spelt.
    ['cat ~/.latch/totp.json', 'secrets'],
    ["cat ~/.la''tch/totp.json", 'secrets'],
    ['cat "$HOME"/.latch/totp.json', 'secrets'],
    ['cat ${HOME}/.latch/host-token', 'secrets'],
    ['cat ~/.latch/tot\\p.json', 'secrets'],
    ['cat ~/.latch/TOTP.json', 'secrets'],
    ['cd ~/.latch && cat totp.json', 'secrets'],
    ['cd ~ && cat .latch/totp.json', 'secrets'],
    ['cd ~/.latch && cat *', 'secrets'],
    ['cd ~ && cat .lat?h/t*', 'secrets'],
    ['cd .. && cat .l*/h*', 'secrets'],
    ['cat ~/.lat*/t*.json', 'secrets'],
    ['cat ~/.latch/*', 'secrets'],
    ['cat ~/.latch/{totp,config}.json', 'secrets'],
    ["cd ~ && cat $'\\x2el\\141tch'/t*", 'secrets'],
    ['d=~/.latch; cat $d/t*', 'secrets'],
    ['cat ~/.latch/tot$x.json', 'secrets'],
    ['cat $(echo ~/.latch/totp.json)', 'secrets'],
    // Where the output of a substitution leads is not seen; what it names is.
    ['cat `ls -d ~/.lat*`/t*', 'files'],
    ["bash -c 'cat ~/.lat*/tot*'", 'secrets'],
    ['sh -c "sh -c \\"cat ~/.l*/h*\\""', 'secrets'],
    ['cat${IFS}~/.lat*/t*', 'secrets'],
    ['python3 -c "print(open(\'H/.latch/totp.json\').read())"', 'secrets'],
    ["node -e \"require('fs').readFileSync(require('os').homedir() + '/.latch/host-key.json')\"", 'secrets'],
    ['cat x', 'secrets'],
    ['cp conf/totp.json /tmp/t', 'secrets'],
    ['sqlite3 state.db .dump', 'secrets'],
    ['cat ~/.latch/config.toml', 'files'],
    // Latch's own files: any command that names them may write them.
    ['echo "default = \\"allow\\"" > ~/.latch/policy.toml', 'files'],
    ['rm -rf ~/.latch', 'files'],
    ['cd ~ && mv .latch /tmp/x', 'files'],
    ['cd ~ && mv .l?tch /tmp/x', 'files'],
    ['rm ~/.latch/run/daemon.sock', 'files'],
    ['rm daemon.sock', 'files'],
    ['cat conf/audit.log', 'files'],
    ['rm -rf "${LATCH_HOME}"', 'files'],
    // The agents' hook settings.
    ['cat ~/.claude/settings.json', 'hooks'],
    ['echo {} > .claude/settings.json', 'hooks'],
    ["sed -i 's/latch/true/' ~/.codex/hooks.json", 'hooks'],
    ['echo enabled >> $CODEX_HOME/config.toml', 'hooks'],
    ['rm -rf .claude', 'hooks'],
    ['mv ~/.claude /tmp/claude', 'hooks'],
    ['cp evil.json .cl*/settings.local.json', 'hooks'],
    ['cd .claude && echo {} > settings.json', 'hooks'],
    ["python3 -c \"open('.codex/hooks.json','w').write('{}')\"", 'hooks'],
    // Stopping the daemon.
    ['pkill -f "latch daemon"', 'stop'],
    ['killall node', 'stop'],
    [`kill ${DAEMON_PID}`, 'stop'],
    [`kill -9 ${DAEMON_PID}`, 'stop'],
    ['kill -9 $(pgrep -f latch)', 'stop'],
    ['kill $PID', 'stop'],
    ['kill -- -1', 'stop'],
    ['kill -9 -1234', 'stop'],
    ['pgrep latch | xargs kill', 'stop'],
    ["sh -c 'kill -TERM `pgrep node`'", 'stop'],
    ['fuser -k /tmp/x', 'stop'],
    ['systemctl --user stop latch.service', 'stop'],
    ['service latch stop', 'stop'],
    ['launchctl bootout gui/501/dev.latch.daemon', 'stop'],
    ['loginctl terminate-user dev', 'stop'],
    // Latch's commands that change the leash.
    ['latch init --relay https://relay.example', 'commands'],
    ['latch pair', 'commands'],
    ['npx latch@latest pair', 'commands'],
    ['latch install claude-code', 'commands'],
    ['/usr/local/bin/latch uninstall codex', 'commands'],
    ['latch daemon', 'commands'],
    ['latch devices --revoke abc', 'commands'],
    ['node dist/latch/main.mjs pair', 'commands'],
    ["sh -c 'latch pair'", 'commands'],
    ['latch $(echo pair)', 'commands'],
    ['latch exec -- latch pair', 'commands'],
    // Not Latch's: the policy decides.
    ['cat README.md', undefined],
    ['grep latch package.json', undefined],
    ['grep -rn "totp" src', undefined],
    ['ls ~/.claude/commands', undefined],
    ['ls -la', undefined],
    ['ls ~/.latch2', undefined],
    ['git commit -m "fix the .* grep"', undefined],
    ['grep -E "import .* from" src', undefined],
    ['cat state.db.example', undefined],
    ['kill 1234', undefined],
    ['kill %1', undefined],
    ['kill -l', undefined],
    ["sh -c 'kill -USR1 $$'", undefined],
    ['docker kill web', undefined],
    ['systemctl status nginx', undefined],
    ['latch status', undefined],
    ['latch doctor', undefined],
    ['latch audit verify', undefined],
    ['latch hosts', undefined],
    ['latch devices', undefined],
    ['latch panic', undefined],
    ['latch exec -- npm test', undefined],
    ['latch mcp -- npx server', undefined],
    ['latch hook claude-code', undefined],
    ['latch request --title deploy', undefined],
    ['cat ~/$x', undefined],
    ['cat $(echo fi5sYXRjaAo= | base64 -d)/config.toml', undefined],
  ])('%s', (command, guard) => {
    expect(judged(bash(command))).toEqual(expected(guard));
  });

  it('resolves relative words only where it knows the cwd', () => {
    expect(
      judged({ tool: 'Bash', paths: [], command: 'cat config.toml', cwd: join(home, '.latch') }),
    ).toEqual(expected('files'));
    expect(judged({ tool: 'exec', paths: [], command: 'cat config.toml' })).toBeUndefined();
    // A name still counts wherever it is run from.
    expect(judged({ tool: 'exec', paths: [], command: 'cat totp.json' })).toEqual(expected('secrets'));
  });

  it('looks only for secrets’ names in a command longer than a phone shows', () => {
    // The policy asks at critical risk for any command over LONG_COMMAND_BYTES, whatever it names.
    const padding = ` # ${'x'.repeat(LONG_COMMAND_BYTES)}`;
    expect(judged(bash(`cat ~/.la''tch/tot\\p.json${padding}`))).toEqual(expected('secrets'));
    expect(judged(bash(`cat ~/.lat*/t*${padding}`))).toBeUndefined();
  });

  it('names what a person types to approve', () => {
    expect(selfProtection(bash('cat ~/.latch/totp.json'), places)?.target).toBe('totp.json');
    expect(selfProtection(tool('Edit', 'H/.claude/settings.json'), places)?.target).toBe('settings.json');
    expect(selfProtection(bash('latch pair'), places)?.target).toBe('latch pair');
  });
});

describe('self-protection: MCP and unknown tools', () => {
  it.each<[string, () => ProtectedCall, Guard | undefined]>([
    ['reading the secret', () => mcp('mcp__fs__read_file', { path: 'H/.latch/totp.json' }), 'secrets'],
    ['reading it by ~', () => mcp('mcp__fs__read_file', { path: '~/.latch/host-token' }), 'secrets'],
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
      'input cut short, so no longer JSON',
      () => ({
        tool: 'mcp__fs__read_file',
        paths: [],
        input: `{"path": "${home}/.latch/totp.json", "x": "…`,
      }),
      'secrets',
    ],
    ['reading the project', () => mcp('mcp__fs__read_file', { path: at('P/README.md') }), undefined],
    [
      'a search that mentions latch',
      () => mcp('mcp__github__search', { query: 'latch daemon kill switch' }),
      undefined,
    ],
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

describe('self-protection: where the environment puts Latch', () => {
  let custom: ProtectedPlaces;
  let data: string;
  let runtime: string;
  beforeAll(() => {
    data = join(root, 'srv', 'latch-data');
    runtime = join(root, 'run');
    mkdirSync(join(runtime, 'latch'), { recursive: true });
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'totp.json'), '{}');
    custom = protectedPlaces(
      {
        HOME: home,
        LATCH_HOME: data,
        XDG_RUNTIME_DIR: runtime,
        CLAUDE_CONFIG_DIR: join(root, 'claude-config'),
      },
      DAEMON_PID,
    );
  });

  it.each<[string, () => ProtectedCall, Guard | undefined]>([
    ['Read of the secret in a custom LATCH_HOME', () => tool('Read', `${data}/totp.json`), 'secrets'],
    ['Read of ~/.latch/totp.json, no longer Latch’s', () => tool('Read', 'H/.latch/totp.json'), undefined],
    [
      'a command naming the custom home’s folder',
      () => bash(`cd ${join(root, 'srv')} && rm -rf latch-data`),
      'files',
    ],
    ['a command naming it by name alone', () => bash('tar czf /tmp/x.tgz latch-data'), 'files'],
    ['the socket in XDG_RUNTIME_DIR', () => bash('rm $XDG_RUNTIME_DIR/latch/daemon.sock'), 'files'],
    ['the socket’s folder, from a cd', () => bash(`cd ${runtime} && rm -r latch`), 'files'],
    ['Write in the socket’s folder', () => tool('Write', `${runtime}/latch/x`), 'files'],
    [
      'Edit of CLAUDE_CONFIG_DIR’s settings',
      () => tool('Edit', `${root}/claude-config/settings.json`),
      'hooks',
    ],
    [
      'a command through $CLAUDE_CONFIG_DIR',
      () => bash('echo {} > "$CLAUDE_CONFIG_DIR/settings.json"'),
      'hooks',
    ],
  ])('%s', (_name, call, guard) => {
    expect(judged(call(), custom)).toEqual(expected(guard));
  });
});
