import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../daemon/policy/defaultPolicy.ts';
import { globToRegExp } from '../../daemon/policy/glob.ts';
import { evaluatePolicy, parsePolicy, PolicyError } from '../../daemon/policy/policy.ts';
import { isTightening } from '../../daemon/policy/tightening.ts';
import { StandInRelay } from '../support/standInRelay.ts';
import {
  auditLines,
  claudeCodeDecision,
  hookInput,
  type LatchMachine,
  runLatch,
} from '../support/latchMachine.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

const call = (tool: string, command?: string, paths: string[] = []) => ({
  tool,
  paths,
  ...(command ? { command } : {}),
});

describe('the default policy', () => {
  const policy = parsePolicy(DEFAULT_POLICY);
  it.each([
    ['Read', undefined, 'allow'],
    ['Grep', undefined, 'allow'],
    ['Bash', 'ls -la src', 'allow'],
    ['Bash', 'git status', 'allow'],
    ['Bash', 'rm -rf build', 'ask'],
    ['Bash', 'git push --force origin main', 'ask'],
    ['Bash', 'git push origin feature', 'ask'],
    ['Bash', 'curl -X POST https://api.example.com/deploy', 'ask'],
    ['Bash', 'ls; rm -rf /', 'ask'],
    ['Bash', 'ls $(rm -rf ~)', 'ask'],
    ['Bash', 'npm test', 'ask'],
    ['Bash', 'date -u +%s', 'allow'],
    // Review R2: date -f prints a file's lines in its errors; a tab parts it from the +FORMAT.
    ['Bash', 'date +%s\t-f\t/home/dev/.ssh/id_ed25519', 'ask'],
    ['Bash', 'date +%s\t-f/home/dev/.ssh/id_ed25519', 'ask'],
    ['Edit', undefined, 'defer'],
    ['mcp__db__drop_table', undefined, 'ask'],
  ])('answers %s %s with %s', (tool, command, action) => {
    expect(evaluatePolicy(policy, call(tool, command)).action).toBe(action);
  });

  it('asks a phone before an edit of a repository’s config or hooks, or of what makes git read other config, which git status would run', () => {
    for (const [tool, path] of [
      ['Edit', '/home/dev/project/.git/config'],
      ['Write', '.git/hooks/pre-commit'],
      ['MultiEdit', '/home/dev/project/sub/.git/hooks/post-checkout'],
      // Git reads its config from where these point: another folder, or a git folder of its own.
      ['Write', '/home/dev/project/.git/commondir'],
      ['Write', '/home/dev/project/.git/modules/lib/config'],
      ['Write', '/home/dev/project/.git'],
      ['Write', '.git'],
      ['Write', '/home/dev/project/HEAD'],
      ['Write', '/home/dev/project/x/HEAD'],
      ['Edit', '/home/dev/.gitconfig'],
      ['Write', '/home/dev/.config/git/config'],
      // Codex's file tool: the files its patch names (latch hook codex).
      ['apply_patch', '.git/hooks/pre-commit'],
      // Hooks a project keeps for core.hooksPath or a hook manager: git runs them on commit.
      ['Write', '/home/dev/project/.husky/pre-commit'],
      ['Edit', '.husky/_/husky.sh'],
      ['Write', '/home/dev/project/.githooks/pre-push'],
      ['Edit', '/home/dev/project/.pre-commit-config.yaml'],
      ['Write', 'lefthook.yml'],
    ] as const)
      expect(evaluatePolicy(policy, call(tool, undefined, [path])), path).toMatchObject({
        action: 'ask',
        risk: 'high',
        rule: 'repository config that runs code',
      });
    for (const path of ['/home/dev/project/src/git/config.ts', '/home/dev/project/.github/HEADER.md'])
      expect(evaluatePolicy(policy, call('Edit', undefined, [path])).action, path).toBe('defer');
  });

  it('rates destructive shell commands high', () => {
    expect(evaluatePolicy(policy, call('Bash', 'sudo rm -rf /var/lib/postgres'))).toMatchObject({
      action: 'ask',
      risk: 'high',
      rule: 'destructive shell commands',
    });
  });
});

describe('policy files', () => {
  it('lets the first matching rule decide, and matches commands, paths and cwd as globs', () => {
    const policy = parsePolicy(`
default = "deny"
[[rule]]
tool = "Write"
path = ["/srv/*", "*.env"]
action = "ask"
risk = "critical"
target = "production"
timeout_seconds = 60
[[rule]]
tool = "Write"
cwd = "/home/*/scratch"
action = "allow"
`);
    expect(evaluatePolicy(policy, call('Write', undefined, ['/srv/app/config.yml']))).toEqual({
      action: 'ask',
      risk: 'critical',
      rule: 'rule 1',
      timeoutSeconds: 60,
      target: 'production',
    });
    expect(
      evaluatePolicy(policy, { ...call('Write', undefined, ['notes.txt']), cwd: '/home/ada/scratch' }),
    ).toMatchObject({ action: 'allow' });
    expect(evaluatePolicy(policy, call('Write', undefined, ['notes.txt']))).toMatchObject({
      action: 'deny',
      rule: 'default',
    });
  });

  it.each([
    ['an unknown setting', 'defualt = "allow"'],
    ['an unknown rule key', '[[rule]]\ntool = "Bash"\nactoin = "allow"'],
    ['an unknown action', '[[rule]]\ntool = "Bash"\naction = "maybe"'],
    ['a rule without action', '[[rule]]\ntool = "Bash"'],
    ['an unknown risk', '[[rule]]\ntool = "Bash"\naction = "ask"\nrisk = "extreme"'],
    ['a bad regular expression', '[[rule]]\ncommand_regex = "(("\naction = "deny"'],
    ['a tool that is not a string', '[[rule]]\ntool = 3\naction = "deny"'],
    ['TOML that does not parse', 'default = '],
  ])('refuses %s', (_what, text) => {
    expect(() => parsePolicy(text)).toThrow(PolicyError);
  });

  it.each([
    ['an unknown setting', 'default = "ask"\n\ndefualt = "allow"\n', 'unknown setting "defualt" (line 3)'],
    [
      'an unknown rule key',
      '[[rule]]\ntool = "Bash"\naction = "ask"\n\n[[rule]]\nname = "mine"\ntool = "Bash"\nactoin = "allow"\n',
      'rule 2 ("mine"): unknown key "actoin" (line 8)',
    ],
  ])('names the line of %s', (_what, text, message) => {
    expect(() => parsePolicy(text)).toThrow(message);
  });

  it('matches globs whole, with * across spaces and slashes', () => {
    expect(globToRegExp('rm -rf *').test('rm -rf build/out')).toBe(true);
    expect(globToRegExp('rm -rf *').test('echo rm -rf x')).toBe(false);
    expect(globToRegExp('*.[ch]').test('main.c')).toBe(true);
    expect(globToRegExp('a.b').test('aXb')).toBe(false);
  });
});

describe('tightening or loosening', () => {
  const base = parsePolicy(`
default = "ask"
[[rule]]
tool = "Read"
action = "allow"
[[rule]]
name = "removals"
tool = "Bash"
command = "rm *"
action = "ask"
risk = "high"
`);
  const variant = (text: string) => parsePolicy(text);

  it.each([
    [
      'a stricter default',
      'default = "deny"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "ask"\nrisk = "high"',
    ],
    [
      'a rule made stricter',
      'default = "ask"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "deny"\nrisk = "high"',
    ],
    [
      'an added deny rule',
      'default = "ask"\n[[rule]]\ntool = "Bash"\naction = "deny"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "ask"\nrisk = "high"',
    ],
    [
      'a removed allow rule',
      'default = "ask"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "ask"\nrisk = "high"',
    ],
  ])('counts %s as tightening', (_what, text) => {
    expect(isTightening(base, variant(text))).toBe(true);
  });

  it.each([
    [
      'a looser default',
      'default = "allow"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "ask"\nrisk = "high"',
    ],
    [
      'a rule made looser',
      'default = "ask"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "allow"',
    ],
    [
      'a lower risk',
      'default = "ask"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "ask"\nrisk = "low"',
    ],
    [
      'an added allow rule',
      'default = "ask"\n[[rule]]\ntool = "Bash"\naction = "allow"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "ask"\nrisk = "high"',
    ],
    [
      'an added ask rule (it can shadow a deny)',
      'default = "ask"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\ntool = "Bash"\naction = "ask"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "ask"\nrisk = "high"',
    ],
    ['a removed ask rule', 'default = "ask"\n[[rule]]\ntool = "Read"\naction = "allow"'],
    [
      'a defer in place of an ask',
      'default = "ask"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\nname = "removals"\ntool = "Bash"\ncommand = "rm *"\naction = "defer"\nrisk = "high"',
    ],
  ])('counts %s as loosening', (_what, text) => {
    expect(isTightening(base, variant(text))).toBe(false);
  });

  it('counts an unnamed ask rule renumbered by a removed allow rule as loosening (it takes over the grants of its new name)', () => {
    const unnamed =
      'default = "ask"\n[[rule]]\ntool = "Read"\naction = "allow"\n[[rule]]\ntool = "Bash"\naction = "ask"\n';
    expect(
      isTightening(parsePolicy(unnamed), parsePolicy(unnamed.replace('action = "allow"', 'action = "deny"'))),
    ).toBe(true);
    expect(
      isTightening(
        parsePolicy(unnamed),
        parsePolicy('default = "ask"\n[[rule]]\ntool = "Bash"\naction = "ask"\n'),
      ),
    ).toBe(false);
  });
});

describe('policy changes on a running daemon', () => {
  let relay: StandInRelay;
  let machine: LatchMachine;
  let phone: TestPhone;
  let paired: PairedDaemon;
  const STRICT = 'default = "ask"\n[[rule]]\ntool = "Read"\naction = "allow"\n';
  const readX = hookInput('PreToolUse', 'Read', { file_path: '/x' });
  const read = () => runLatch(machine, ['hook', 'claude-code'], { input: readX });
  const decisionOf = async (ran: ReturnType<typeof read>) => claudeCodeDecision(await ran, readX);

  beforeAll(async () => {
    paired = await startPairedDaemon({ policy: STRICT });
    ({ relay, machine } = paired);
    [phone] = paired.phones;
  });

  afterAll(() => paired.stop());

  it('applies a tightening at once', async () => {
    expect(await decisionOf(read())).toBe('allow');
    writeFileSync(
      machine.files.policy,
      `${STRICT}[[rule]]\ntool = "Bash"\naction = "deny"\n`.replace(
        '[[rule]]\ntool = "Read"\naction = "allow"\n',
        '[[rule]]\ntool = "Read"\naction = "deny"\n',
      ),
    );
    expect(await decisionOf(read())).toBe('deny');
    expect(auditLines(machine)).toContainEqual(
      expect.objectContaining({ event: 'policy_approved', by: 'tightening (takes effect at once)' }),
    );
  });

  it('keeps the approved policy while a loosening waits for a phone, then applies it once approved', async () => {
    const before = relay.requests.length;
    const approved = readFileSync(machine.files.policy, 'utf8');
    writeFileSync(
      machine.files.policy,
      approved.replace('tool = "Read"\naction = "deny"', 'tool = "Read"\naction = "allow"'),
    );
    // The loosening has no effect: the read stays denied, and a phone is asked.
    expect(await decisionOf(read())).toBe('deny');
    expect((await runLatch(machine, ['status'])).stdout).toMatch(/policy loosening pending/);
    const request = await relay.nextRequest(before);
    const { details, token } = await phoneApproves(phone, request, relay.origin);
    expect(details).toMatchObject({ tool: 'latch.policy', title: 'Loosen the Latch policy', risk: 'high' });
    // Only what changed, against the policy in force: not the whole new file.
    expect(details.detail).not.toContain('tool = "Read"');
    expect(details.diff).toBe(
      [
        '--- a/policy.toml',
        '+++ b/policy.toml',
        '@@ -1,7 +1,7 @@',
        ' default = "ask"',
        ' [[rule]]',
        ' tool = "Read"',
        '-action = "deny"',
        '+action = "allow"',
        ' [[rule]]',
        ' tool = "Bash"',
        ' action = "deny"',
        '',
      ].join('\n'),
    );
    expect(await decisionOf(read())).toBe('deny');

    relay.sendApproval(request.requestId, token);
    await expect.poll(async () => decisionOf(read())).toBe('allow');
  });
});
