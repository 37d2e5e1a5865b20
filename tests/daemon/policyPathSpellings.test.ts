import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../daemon/policy/defaultPolicy.ts';
import { evaluatePolicy, parsePolicy, type GatedCall } from '../../daemon/policy/policy.ts';
import { auditLines, hookInput, runLatch } from '../support/latchMachine.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

// Review kc: path globs matched a path's letters, case-sensitively, never through a link, while
// the file is what a tool writes. `.GIT/config` is `.git/config` on macOS, and a link in the tree
// leads there on any system; rule 5 then deferred the edit, and `git status` ran core.fsmonitor.

let root: string;
/** A project that is a git repository, with links a cloned tree may carry. */
let project: string;
/** The user's folder, with its git config. */
let user: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'latch-path-spellings-'));
  project = join(root, 'project');
  user = join(root, 'user');
  for (const folder of ['.git/hooks', 'sub', 'public', 'v', 'vault'])
    mkdirSync(join(project, folder), { recursive: true });
  mkdirSync(user);
  writeFileSync(join(project, '.git', 'config'), '[core]\n');
  writeFileSync(join(user, '.gitconfig'), '[user]\n');
  symlinkSync('.git', join(project, 'g'));
  symlinkSync(join(user, '.gitconfig'), join(project, 'gc'));
  // Where no file is yet: writing through the link creates it there.
  symlinkSync(join(user, '.config', 'git', 'config'), join(project, 'xdg'));
  // From a folder a rule allows, to what rule 5 guards.
  symlinkSync('../.git/config', join(project, 'public', 'cfg'));
  symlinkSync('../.git/hooks', join(project, 'public', 'hooks'));
  // A folder a rule refuses, under another name.
  rmSync(join(project, 'v'), { recursive: true });
  symlinkSync('vault', join(project, 'v'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const write = (path: string, cwd = project): GatedCall => ({ tool: 'Write', paths: [path], cwd });
const at = (path: string) => path.replace(/^P\//, `${project}/`).replace(/^H\//, `${user}/`);

describe('path rules judge the file, not its spelling', () => {
  const policy = parsePolicy(DEFAULT_POLICY);

  it.each([
    ['P/.git/config', 'as spelt, as before'],
    ['P/.GIT/config', 'in another case'],
    ['P/.Git/hooks/pre-commit', 'in another case'],
    ['.GIT/config', 'relative, in another case'],
    ['H/.Gitconfig', 'the user’s git config in another case'],
    ['~/.Gitconfig', 'the user’s git config in another case, ~-spelt'],
    ['P/sub/head', 'a HEAD in lower case'],
    ['sub/head', 'a HEAD in lower case, relative'],
    ['P/.Husky/pre-commit', 'a hook manager’s folder in another case'],
    ['P/g/config', 'through a link to .git'],
    ['P/g/hooks/pre-commit', 'through a link to .git'],
    ['g/hooks/pre-commit', 'through a link to .git, relative'],
    ['P/gc', 'a link to ~/.gitconfig'],
    ['P/xdg', 'a link to where ~/.config/git/config would be'],
    ['P/sub/../g/config', 'through a link, after a ..'],
  ])('asks a phone at high risk for a Write of %s (%s)', (path) => {
    expect(evaluatePolicy(policy, write(at(path)))).toMatchObject({
      action: 'ask',
      risk: 'high',
      rule: 'repository config that runs code',
    });
  });

  it('still defers an edit of a file of the project that is none of those, by any spelling', () => {
    for (const path of [
      'P/src/git/config.ts',
      'P/.github/HEADER.md',
      'P/sub/headers.txt',
      'P/public/notes.md',
    ])
      expect(evaluatePolicy(policy, write(at(path))).action, path).toBe('defer');
  });

  it('matches a user’s deny rule in any case', () => {
    const denying = parsePolicy(
      `[[rule]]\nname = "secrets"\npath = "*/secrets/*"\naction = "deny"\n[[rule]]\ntool = "Write"\naction = "allow"`,
    );
    expect(evaluatePolicy(denying, write(at('P/Secrets/token')))).toMatchObject({
      rule: 'secrets',
      action: 'deny',
    });
  });

  it('matches a cwd rule by the folder the cwd is, and in any case', () => {
    const denying = parsePolicy(
      `[[rule]]\nname = "vault"\ntool = "Bash"\ncwd = "${project}/vault"\naction = "deny"\n[[rule]]\ntool = "Bash"\naction = "allow"`,
    );
    const bash = (cwd: string): GatedCall => ({ tool: 'Bash', command: 'make', paths: [], cwd });
    expect(evaluatePolicy(denying, bash(`${project}/v`))).toMatchObject({ rule: 'vault', action: 'deny' });
    expect(evaluatePolicy(denying, bash(`${project}/VAULT`))).toMatchObject({
      rule: 'vault',
      action: 'deny',
    });
    expect(evaluatePolicy(denying, bash(`${project}/public`)).action).toBe('allow');
  });
});

describe('another spelling only tightens', () => {
  const allowingPublic = (rest: string) =>
    parsePolicy(
      `[[rule]]\nname = "public"\ntool = "Write"\npath = "${project}/public/*"\naction = "allow"\n${rest}`,
    );

  it('does not widen an allow rule to a folder of another case', () => {
    const policy = allowingPublic('');
    expect(evaluatePolicy(policy, write(at('P/public/notes.md'))).action).toBe('allow');
    expect(evaluatePolicy(policy, write(at('P/PUBLIC/notes.md')))).toMatchObject({
      action: 'ask',
      rule: 'default',
    });
  });

  it('does not let a rule that allows in one case pass a deny written in another', () => {
    const policy = parsePolicy(
      `[[rule]]\nname = "docs"\npath = "*/docs/*"\naction = "allow"\n[[rule]]\nname = "Docs private"\npath = "*/Docs/private/*"\naction = "deny"`,
    );
    expect(evaluatePolicy(policy, write(at('P/Docs/private/a.md')))).toMatchObject({ action: 'deny' });
    expect(evaluatePolicy(policy, write(at('P/docs/a.md'))).action).toBe('allow');
  });

  it('does not allow a link from an allowed folder to a guarded place', () => {
    const policy = allowingPublic(DEFAULT_POLICY.replace(/^[\s\S]*?(?=\[\[rule\]\])/, ''));
    expect(evaluatePolicy(policy, write(at('P/public/notes.md'))).action).toBe('allow');
    for (const path of ['P/public/cfg', 'P/public/hooks/pre-commit'])
      expect(evaluatePolicy(policy, write(at(path))), path).toMatchObject({
        action: 'ask',
        risk: 'high',
        rule: 'repository config that runs code',
      });
    // A link out of the allowed folder to anywhere else is judged where it leads too.
    expect(evaluatePolicy(allowingPublic(''), write(at('P/public/cfg')))).toMatchObject({
      action: 'ask',
      rule: 'default',
    });
  });

  it('keeps a call with no path or folder rule to judge as it was', () => {
    const policy = parsePolicy(DEFAULT_POLICY);
    expect(
      evaluatePolicy(policy, { tool: 'Bash', command: 'git status', paths: [], cwd: `${project}/g` }),
    ).toMatchObject({
      action: 'allow',
    });
    expect(evaluatePolicy(policy, { tool: 'Read', paths: [at('P/g/config')], cwd: project }).action).toBe(
      'allow',
    );
  });
});

describe('the daemon, with the default policy', () => {
  let paired: PairedDaemon;
  let repo: string;

  beforeAll(async () => {
    paired = await startPairedDaemon();
    repo = join(dirname(paired.machine.home), 'repo');
    mkdirSync(join(repo, '.git', 'hooks'), { recursive: true });
    symlinkSync('.git', join(repo, 'g'));
  });
  afterAll(() => paired?.stop());

  it.each(['.GIT/config', 'g/hooks/pre-commit'])(
    'asks a phone at high risk for a Write of %s, where it used to defer to the agent’s prompt',
    async (path) => {
      const before = paired.relay.requests.length;
      const input = hookInput(
        'PreToolUse',
        'Write',
        { file_path: join(repo, path), content: '[core]\n\tfsmonitor = touch /tmp/ran\n' },
        { cwd: repo },
      );
      const answered = runLatch(paired.machine, ['hook', 'claude-code'], { input });
      await paired.relay.sendDenial(paired.phones[0], await paired.relay.nextRequest(before));
      expect((await answered).code).toBe(2);
      expect(
        auditLines(paired.machine)
          .filter((line) => line['event'] === 'asked')
          .at(-1),
      ).toMatchObject({
        tool: 'Write',
        risk: 'high',
      });
    },
  );
});
