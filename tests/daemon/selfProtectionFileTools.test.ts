import { linkSync, mkdirSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  protectedPlaces,
  withAgentConfigDir,
  withDaemonThreads,
} from '../../daemon/policy/protectedPlaces.ts';
import { selfProtection, type Guard, type ProtectedCall } from '../../daemon/policy/selfProtection.ts';
import {
  at,
  bash,
  DAEMON_PID,
  expected,
  home,
  judged,
  LATCH_IN_HOME,
  makeProtectedHome,
  NODE_IN_HOME,
  places,
  project,
  removeProtectedHome,
  root,
  STATE_COPY,
  tool,
} from '../support/protectedHome.ts';

beforeAll(makeProtectedHome);
afterAll(removeProtectedHome);

describe('self-protection: tools that read', () => {
  it.each<[string, () => ProtectedCall, Guard | undefined]>([
    ['Read of the TOTP secret', () => tool('Read', 'H/.latch/totp.json'), 'secrets'],
    ['Read of the host key', () => tool('Read', 'H/.latch/host-key.json'), 'secrets'],
    ['Read of the relay’s VAPID keys', () => tool('Read', 'H/.latch/relay/relay-secrets.json'), 'secrets'],
    ['Read of the host token, relative to the cwd', () => tool('Read', '../.latch/host-token'), 'secrets'],
    ['Read of the state database’s WAL', () => tool('Read', 'H/.latch/state.db-wal'), 'secrets'],
    ['Read of ~/.latch/state.db, ~ expanded', () => tool('Read', '~/.latch/state.db'), 'secrets'],
    ['Read of the state a reset kept', () => tool('Read', `H/.latch/${STATE_COPY}`), 'secrets'],
    ['Read of $HOME/.latch/totp.json', () => tool('Read', '$HOME/.latch/totp.json'), 'secrets'],
    ['Read of ${HOME}/.latch/totp.json', () => tool('Read', '${HOME}/.latch/totp.json'), 'secrets'],
    ['Read of the secret in another case', () => tool('Read', 'H/.LATCH/TOTP.JSON'), 'secrets'],
    // Review Z: letters a case-insensitive volume may fold (a long s, full-width, sharp s).
    ['Read of the secret with a long s', () => tool('Read', 'H/.latch/totp.j\u017Fon'), 'secrets'],
    ['Read of the secret in full-width letters', () => tool('Read', 'H/.latch/\uFF54otp.json'), 'secrets'],
    ['Write of .zshrc with a long s', () => tool('Write', 'H/.z\u017Fhrc'), 'hooks'],
    ['Write of ssh’s rc with a sharp s', () => tool('Write', 'H/.\u00DFh/rc'), 'hooks'],
    ['Write of ssh’s rc with a capital sharp s', () => tool('Write', 'H/.\u1E9Eh/rc'), 'hooks'],
    [
      'Read of the secret with a character HFS+ leaves out',
      () => tool('Read', 'H/.latch/tot\u200Cp.json'),
      'secrets',
    ],
    ['Read of a file named in other letters', () => tool('Read', 'P/caf\u00E9.txt'), undefined],
    // Review Z: a control group's file, written, freezes or kills the daemon; read, it only tells.
    [
      'Write of a control group’s freeze',
      () => tool('Write', '/sys/fs/cgroup/user.slice/cgroup.freeze'),
      'stop',
    ],
    [
      'Read of a control group’s limit',
      () => tool('Read', '/sys/fs/cgroup/user.slice/memory.max'),
      undefined,
    ],
    ['Write of a project’s file named like one', () => tool('Write', 'P/memory.max'), undefined],
    ['Read through a link to the secret', () => tool('Read', 'x'), 'secrets'],
    ['Read through a linked folder', () => tool('Read', 'P/conf/totp.json'), 'secrets'],
    ['Read through .. after a linked folder', () => tool('Read', 'P/conf/../.latch/totp.json'), 'secrets'],
    ['Read of a hard link to the host key', () => tool('Read', 'P/key-copy.json'), 'secrets'],
    ['Write over a hard link to the host key', () => tool('Write', 'P/key-copy.json'), 'secrets'],
    ['Read through a link to a secret not written yet', () => tool('Read', 'wal'), 'secrets'],
    // The tool's process's own links, which the daemon would resolve to its own folder.
    ['Read through /proc/self/cwd', () => tool('Read', '/proc/self/cwd/../.latch/host-key.json'), 'secrets'],
    ['Write through /proc/self/cwd', () => tool('Write', '/proc/self/cwd/../.bashrc'), 'hooks'],
    ['NotebookRead of the secret', () => tool('NotebookRead', 'H/.latch/totp.json'), 'secrets'],
    ['LS of the secret', () => tool('LS', 'H/.latch/totp.json'), 'secrets'],
    ['Glob in the secret', () => tool('Glob', 'H/.latch/host-token'), 'secrets'],
    ['Grep through Latch’s home, which reads the secrets in it', () => tool('Grep', 'H/.latch'), 'secrets'],
    ['Grep from above Latch’s home', () => tool('Grep', 'H'), 'files'],
    ['Grep from ~, above Latch’s home', () => tool('Grep', '~'), 'files'],
    [
      'Grep in a folder of Latch’s home, which holds a secret',
      () => tool('Grep', 'H/.latch/relay'),
      'secrets',
    ],
    [
      'Grep in Claude Code’s settings, which the policy may allow',
      () => tool('Grep', 'H/.claude'),
      undefined,
    ],
    ['Grep in the project', () => tool('Grep', 'P'), undefined],
    [
      'Grep without a path, run in Latch’s home, which searches it',
      () => ({ tool: 'Grep', paths: [], cwd: at('H/.latch') }),
      'secrets',
    ],
    ['Grep without a path, run from ~', () => ({ tool: 'Grep', paths: [], cwd: at('H') }), 'files'],
    ['Grep without a path, run in the project', () => ({ tool: 'Grep', paths: [], cwd: at('P') }), undefined],
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
    [
      'Read of a path with a * in it, which names that one file',
      () => tool('Read', 'H/.latch/t*'),
      undefined,
    ],
    ['Read in a folder named ~, which is no home', () => tool('Read', '/~/.latch/totp.json'), undefined],
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
    // What is in Claude Code's user folder: plugins add hooks, hook scripts run outside any gate.
    ['Write of a Claude Code command', () => tool('Write', 'H/.claude/commands/deploy.md'), 'hooks'],
    ['Write of a hook script', () => tool('Write', 'H/.claude/hooks/format.sh'), 'hooks'],
    ['Write of a plugin’s hooks', () => tool('Write', 'H/.claude/plugins/x/hooks/hooks.json'), 'hooks'],
    ['Write of Claude Code’s MCP servers', () => tool('Write', 'H/.claude.json'), 'hooks'],
    // A login shell (Codex's `$SHELL -lc`) runs these before Latch's hook: `exit 0` lets the tool run.
    ['Edit of the shell profile', () => tool('Edit', 'H/.profile'), 'hooks'],
    ['Write of bash’s login profile', () => tool('Write', 'H/.bash_profile'), 'hooks'],
    ['Edit of .bashrc, which profiles read', () => tool('Edit', 'H/.bashrc'), 'hooks'],
    ['Write of zsh’s .zshenv, which every zsh reads', () => tool('Write', 'H/.zshenv'), 'hooks'],
    ['Edit of zsh’s login profile', () => tool('Edit', 'H/.zprofile'), 'hooks'],
    ['Write of fish’s config', () => tool('Write', 'H/.config/fish/config.fish'), 'hooks'],
    ['Write of a fish snippet', () => tool('Write', 'H/.config/fish/conf.d/x.fish'), 'hooks'],
    ['Write of fish’s universal variables', () => tool('Write', 'H/.config/fish/fish_variables'), 'hooks'],
    ['Write of the X session’s start-up file', () => tool('Write', 'H/.xsessionrc'), 'hooks'],
    ['Edit of the login environment', () => tool('Edit', 'H/.pam_environment'), 'hooks'],
    ['Read of the shell profile (left to the policy)', () => tool('Read', 'H/.profile'), undefined],
    ['Write of a project’s .profile', () => tool('Write', 'P/.profile'), undefined],
    // What is in a project's agent folder configures the agent: subagents and skills declare
    // hooks in their front matter, and hook scripts run outside any gate.
    [
      'Write of a project’s Claude Code command',
      () => tool('Write', 'P/.claude/commands/deploy.md'),
      'hooks',
    ],
    ['Write of a project’s subagent', () => tool('Write', 'P/.claude/agents/reviewer.md'), 'hooks'],
    ['Edit of a project’s skill', () => tool('Edit', 'P/.claude/skills/release/SKILL.md'), 'hooks'],
    ['Write of a project’s hook script', () => tool('Write', 'P/sub/.claude/hooks/format.sh'), 'hooks'],
    ['Write in a project’s Codex folder', () => tool('Write', 'P/.codex/prompts/x.md'), 'hooks'],
    [
      'Read of a project’s subagent (left to the policy)',
      () => tool('Read', 'P/.claude/agents/reviewer.md'),
      undefined,
    ],
    ['Write of a file only named like the folder', () => tool('Write', 'P/docs/.claude.md'), undefined],
    ['Write in the project', () => tool('Write', 'P/src/latch.ts'), undefined],
    [
      'Edit of a file named settings.json elsewhere',
      () => tool('Edit', 'P/.vscode/settings.json'),
      undefined,
    ],
    ['Write of a folder that only starts like Latch’s', () => tool('Write', 'H/.latch2/x'), undefined],
    // What runs as Latch: rewritten, it runs in the hook's place on the next call, or as the daemon.
    ['Write of the hook’s bundle', () => tool('Write', `H/${LATCH_IN_HOME}/dist/latch/hook.cjs`), 'files'],
    ['Edit of latch.cjs', () => tool('Edit', `H/${LATCH_IN_HOME}/daemon/bin/latch.cjs`), 'files'],
    [
      'Write in the SQLite package the daemon loads',
      () => tool('Write', `H/${LATCH_IN_HOME}/node_modules/better-sqlite3/lib/index.js`),
      'files',
    ],
    ['Write over the node the hook runs on', () => tool('Write', `H/${NODE_IN_HOME}`), 'files'],
    ['Read of the hook’s bundle', () => tool('Read', `H/${LATCH_IN_HOME}/dist/latch/hook.cjs`), undefined],
    [
      'Write beside Latch’s program (its README)',
      () => tool('Write', `H/${LATCH_IN_HOME}/README.md`),
      undefined,
    ],
    // How the user's service manager starts the daemon, and the environment it starts it in.
    [
      'Write of the daemon’s systemd unit',
      () => tool('Write', 'H/.config/systemd/user/latch.service'),
      'files',
    ],
    [
      'Write of a drop-in for it',
      () => tool('Write', 'H/.config/systemd/user/latch.service.d/env.conf'),
      'files',
    ],
    ['Write in environment.d', () => tool('Write', 'H/.config/environment.d/node.conf'), 'files'],
    ['Write of systemd’s user.conf', () => tool('Write', 'H/.config/systemd/user.conf'), 'files'],
    [
      'Write of a unit in user.control, ahead of user/',
      () => tool('Write', 'H/.config/systemd/user.control/latch.service'),
      'files',
    ],
    [
      'Write of a drop-in in the data folder',
      () => tool('Write', 'H/.local/share/systemd/user/latch.service.d/env.conf'),
      'files',
    ],
    ['Write of a launchd agent', () => tool('Write', 'H/Library/LaunchAgents/dev.latch.plist'), 'files'],
    // A project's MCP servers, which Claude Code starts outside any gate.
    ['Write of a project’s MCP servers', () => tool('Write', 'P/.mcp.json'), 'hooks'],
    ['Edit of MCP servers in a subfolder', () => tool('Edit', 'P/app/.mcp.json'), 'hooks'],
    ['Write of a file only named like them', () => tool('Write', 'P/.mcp.json.example'), undefined],
  ])('%s', (_name, call, guard) => {
    expect(judged(call())).toEqual(expected(guard));
  });
});

describe('self-protection: a `..` after a link, as the kernel walks it, and hard links (review R1)', () => {
  // `d` leads to the project itself, so the kernel takes `d/..` to the folder above it, the home
  // folder; read as text, `d/..` cancels out and stays in the project.
  beforeAll(() => {
    symlinkSync('.', at('P/d'));
    symlinkSync('d/..', at('P/up'));
    symlinkSync('d/../.latch/policy.toml', at('P/settings.toml'));
    mkdirSync(at('H/.config/app/deep'), { recursive: true });
    symlinkSync(at('H/.config/app/deep'), at('P/app-config'));
    // Hard links to files inside protected folders: no name, and no folder above them, shows it.
    linkSync(at('H/.latch/policy.toml'), at('P/policy-copy.toml'));
    linkSync(at(`H/${LATCH_IN_HOME}/dist/latch/hook.cjs`), at('P/hook-copy.cjs'));
    linkSync(at('P/.claude/settings.json'), at('P/settings-copy.json'));
    mkdirSync(at('H/.claude/skills/review/scripts'), { recursive: true });
    writeFileSync(at('H/.claude/skills/review/scripts/hook.sh'), 'true');
    linkSync(at('H/.claude/skills/review/scripts/hook.sh'), at('P/skill-hook.sh'));
  });

  it.each<[string, () => ProtectedCall, Guard | undefined]>([
    [
      'Write of a start-up file through a link that leads up',
      () => tool('Write', 'P/up/.bash_profile'),
      'hooks',
    ],
    ['Write of Latch’s policy through a link that leads up', () => tool('Write', 'P/settings.toml'), 'files'],
    [
      'Write of hook settings, relative, through it',
      () => tool('Write', 'up/.claude/settings.json'),
      'hooks',
    ],
    ['Read of a secret through it', () => tool('Read', 'P/up/.latch/totp.json'), 'secrets'],
    [
      'Write of a path whose `..` follows a linked folder',
      () => tool('Write', 'P/app-config/../../../.zshenv'),
      'hooks',
    ],
    ['A command writing through the link', () => bash('cp /tmp/x up/.bash_profile'), 'hooks'],
    ['Write of a file beside the links', () => tool('Write', 'P/up-notes.md'), undefined],
    ['Write of a hard link to Latch’s policy', () => tool('Write', 'P/policy-copy.toml'), 'files'],
    ['Write of a hard link to the hook’s bundle', () => tool('Write', 'P/hook-copy.cjs'), 'files'],
    ['Write of a hard link to the project’s settings', () => tool('Write', 'P/settings-copy.json'), 'hooks'],
    ['A command writing it', () => bash('cp /tmp/x settings-copy.json'), 'hooks'],
    [
      'Write of a hard link to a skill’s script, four folders down',
      () => tool('Write', 'P/skill-hook.sh'),
      'hooks',
    ],
    [
      'A command writing a hard link to Latch’s policy',
      () => bash('sed -i s/ask/allow/ policy-copy.toml'),
      'files',
    ],
  ])('%s', (_name, call, guard) => {
    expect(judged(call())).toEqual(expected(guard));
  });
});

describe('self-protection: a hard link into the agents’ folders, beside a folder of programs with thousands of files', () => {
  it('is still seen: the files of folders of programs (as root, /usr/bin’s) are compared last', () => {
    const programs = join(root, 'many-programs');
    mkdirSync(programs);
    for (let i = 0; i < 9000; i++) writeFileSync(join(programs, `program-${i}`), '');
    mkdirSync(at('H/.claude/skills/lint/scripts'), { recursive: true });
    writeFileSync(at('H/.claude/skills/lint/scripts/check.sh'), 'true');
    linkSync(at('H/.claude/skills/lint/scripts/check.sh'), at('P/lint-check.sh'));
    const crowded = protectedPlaces({ HOME: home, PATH: programs }, DAEMON_PID, [], join(root, 'system'));
    expect(crowded.places.some(({ path }) => path === programs)).toBe(true);
    expect(selfProtection(tool('Write', 'P/lint-check.sh'), crowded)).toMatchObject({ action: 'ask' });
  });
});

describe('self-protection: a hard link to a file moved into a protected folder since it was last looked at (review Zg)', () => {
  it('is seen at once: the folders listed are looked at again', () => {
    writeFileSync(at('P/harmless.md'), 'harmless');
    linkSync(at('P/harmless.md'), at('P/other-name.md'));
    // Judging the move lists what the protected folders hold, before the move runs.
    expect(judged(bash('mv harmless.md ~/.claude/commands/new.md'))).toEqual(expected('hooks'));
    renameSync(at('P/harmless.md'), at('H/.claude/commands/new.md'));
    expect(judged(tool('Write', 'P/other-name.md'))).toEqual(expected('hooks'));
  });
});

describe('self-protection: a Codex patch, judged by the files its headers name (review R5)', () => {
  const patched = (...files: string[]): ProtectedCall => {
    const patch = [
      '*** Begin Patch',
      ...files.flatMap((file) => [`*** Add File: ${file}`, '+x']),
      '*** End Patch',
    ].join('\n');
    // Codex tells its hooks no folder a patch applies in.
    return {
      tool: 'apply_patch',
      paths: files,
      command: patch,
      input: JSON.stringify({ command: patch }),
      cwd: project,
      folderUnsure: true,
    };
  };

  it('asks nothing of a patch to the project’s own files, whose lines are no shell command', () => {
    expect(judged(patched('src/a.ts', 'README.md'))).toBeUndefined();
  });

  it('guards a patch to hook settings or start-up files, naming that file', () => {
    expect(selfProtection(patched('src/a.ts', '.codex/hooks.json'), places)).toMatchObject({
      action: 'ask',
      target: '.codex',
    });
    expect(selfProtection(patched('.zshrc'), places)).toMatchObject({ action: 'ask', target: '.zshrc' });
  });

  it('reads a patch given as a shell command as one: its folder is the shell’s to tell (review Zg)', () => {
    const command = [
      `cd ${at('H/.latch')} && apply_patch <<'EOF'`,
      '*** Begin Patch',
      '*** Add File: notes.md',
      '+x',
      '*** End Patch',
      'EOF',
    ].join('\n');
    expect(
      judged({
        tool: 'apply_patch',
        paths: ['notes.md'],
        command,
        input: JSON.stringify({ command }),
        cwd: project,
        folderUnsure: true,
      }),
    ).toEqual(expected('secrets'));
  });
});

describe('self-protection: the agent’s config folder as the agent’s environment names it', () => {
  it('guards the hook settings there once the call names the folder, and not before', () => {
    const folder = at('H/.config/claude');
    const write = { tool: 'Write', paths: [join(folder, 'settings.json')], cwd: at('P') };
    expect(judged(write)).toBeUndefined();
    expect(judged(write, withAgentConfigDir(places, 'claude-code', folder))).toEqual(expected('hooks'));
    // It only adds: the daemon's own places stay guarded whatever folder a call names.
    expect(
      judged(tool('Write', 'H/.claude/settings.json'), withAgentConfigDir(places, 'claude-code', folder)),
    ).toEqual(expected('hooks'));
  });
});

describe('self-protection: the daemon’s /proc folder under any of its threads’ ids', () => {
  it('guards /proc/<thread id> as /proc/<pid>: its environment, memory and open files', () => {
    // This test's own process stands for the daemon: Node runs threads beside the main one.
    const thread = readdirSync(`/proc/${process.pid}/task`).find((id) => id !== String(process.pid))!;
    const daemonPlaces = withDaemonThreads(protectedPlaces({ HOME: home }, process.pid, []));
    for (const file of ['environ', 'mem', 'fd', `task/${thread}/environ`])
      expect(judged(tool('Read', `/proc/${thread}/${file}`), daemonPlaces)).toEqual(expected('secrets'));
    // Without the threads read, the same Read passes: the pid alone names the daemon there.
    expect(
      judged(tool('Read', `/proc/${thread}/environ`), protectedPlaces({ HOME: home }, process.pid, [])),
    ).toBeUndefined();
  });
});

describe('self-protection: the agents’ own programs (review O)', () => {
  it('guards the claude and codex the PATH finds, where they lead, their npm package, and Claude Code’s installer’s folders', () => {
    // An npm-installed codex linked from a bin folder on the PATH, and Claude Code's own install.
    const codexPackage = at('H/.npm-global/lib/node_modules/@openai/codex');
    mkdirSync(join(codexPackage, 'bin'), { recursive: true });
    writeFileSync(join(codexPackage, 'bin/codex.js'), '');
    mkdirSync(at('H/.npm-global/bin'), { recursive: true });
    symlinkSync(join(codexPackage, 'bin/codex.js'), at('H/.npm-global/bin/codex'));
    mkdirSync(at('H/.local/share/claude/versions'), { recursive: true });
    writeFileSync(at('H/.local/share/claude/versions/2.0.1'), '');
    mkdirSync(at('H/.local/bin'), { recursive: true });
    symlinkSync(at('H/.local/share/claude/versions/2.0.1'), at('H/.local/bin/claude'));
    const withAgents = protectedPlaces({ HOME: home, PATH: `/usr/bin:${at('H/.npm-global/bin')}` }, 4242, []);
    for (const path of [
      'H/.local/bin/claude',
      'H/.local/share/claude/versions/2.0.1',
      'H/.npm-global/bin/codex',
      'H/.npm-global/lib/node_modules/@openai/codex/bin/codex.js',
      'H/.npm-global/lib/node_modules/@openai/codex/package.json',
    ])
      expect(judged(tool('Write', path), withAgents), path).toEqual(expected('files'));
    expect(judged(bash('cp /tmp/wrapper H/.local/bin/claude'), withAgents)).toEqual(expected('files'));
    // One put in a folder before theirs on the PATH runs in their stead.
    expect(judged(bash('cp /tmp/wrapper /usr/bin/claude'), withAgents)).toEqual(expected('files'));
    // A global install of another package is the policy's (review Q).
    expect(judged(bash('npm install -g typescript'), withAgents)).toBeUndefined();
    // Running them is not writing them.
    expect(judged(bash('claude -p task'), withAgents)).toBeUndefined();
  });

  it('guards every program in a folder of the PATH, and the user’s own bin folders (review sb)', () => {
    const withPath = protectedPlaces(
      { HOME: home, PATH: `${at('H/.pyenv/bin')}:/usr/bin:${home}:relative/bin` },
      4242,
      [],
    );
    // Run in place of what the name meant: by a login shell before Codex's hook (`eval "$(pyenv
    // init -)"`, Debian's `id`), by an allowed `ls`, by `#!/usr/bin/env node` starting an agent.
    for (const path of ['H/.pyenv/bin/pyenv', 'H/.local/bin/id', 'H/bin/node'])
      expect(judged(tool('Write', path), withPath), path).toEqual(expected('files'));
    // The home folder on the PATH guards no more than it did, nor does a relative folder; the
    // system's folders are not the user's to write, and are named in commands all the time.
    expect(judged(tool('Write', 'H/project/notes.md'), withPath)).toBeUndefined();
    expect(judged(tool('Write', 'H/project/relative/bin/x'), withPath)).toBeUndefined();
    expect(judged(bash('/usr/bin/env python3 x.py'), withPath)).toBeUndefined();
    // A command that names the folder is the policy's: listing it, running a program in it (review rw).
    expect(judged(bash('ls -la H/.local/bin'), withPath)).toBeUndefined();
    expect(judged(bash('H/.pyenv/bin/pyenv versions'), withPath)).toBeUndefined();
  });

  it('leaves a project’s folders on the PATH to the policy: a checkout, its packages’, a virtual environment’s (review rw)', () => {
    for (const made of ['H/project/.git', 'H/project/node_modules/.bin', 'H/project/.venv/bin'])
      mkdirSync(at(made), { recursive: true });
    writeFileSync(at('H/project/.venv/pyvenv.cfg'), '');
    const folders = ['H/project', 'H/project/node_modules/.bin', 'H/project/.venv/bin'].map(at);
    const projectOnPath = protectedPlaces({ HOME: home, PATH: folders.join(':') }, 4242, []);
    for (const path of [
      'H/project/src/app.ts',
      'H/project/node_modules/.bin/vitest',
      'H/project/.venv/bin/pytest',
    ])
      expect(judged(tool('Write', path), projectOnPath), path).toBeUndefined();
  });
});
