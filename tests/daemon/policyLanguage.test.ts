import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { globMatches, globToRegExp } from '../../daemon/policy/glob.ts';
import { evaluatePolicy, parsePolicy, PolicyError, type GatedCall } from '../../daemon/policy/policy.ts';

const refusal = (text: string) => {
  try {
    parsePolicy(text);
  } catch (error) {
    return error;
  }
  throw new Error('the policy was accepted');
};

describe('a policy file that is wrong', () => {
  // A typo must never loosen the policy: each mistake is refused, and says where it is.
  it.each([
    ['TOML that does not parse', 'default = ', /^not valid TOML: .{10,}$/],
    ['an unknown setting', 'default = "ask"\n\ndefualt = "allow"', 'unknown setting "defualt" (line 3)'],
    [
      'a tool that is a number',
      '[[rule]]\ntool = 3\naction = "ask"',
      'rule 1: tool must be a string or a list of strings',
    ],
    [
      'an empty list of regular expressions',
      '[[rule]]\ncommand_regex = []\naction = "ask"',
      'rule 1: command_regex must be a string or a list of strings',
    ],
    ['rules not written [[rule]]', 'rule = "x"', 'rules are written [[rule]]'],
    ['a rule that is not a table', 'rule = [1]', 'rule 1 is not a table'],
    [
      'an action that is not a string',
      '[[rule]]\naction = 1',
      'rule 1: action must be one of allow, deny, ask, defer',
    ],
    [
      'an unknown risk',
      '[[rule]]\naction = "ask"\nrisk = "extreme"',
      'rule 1: risk must be one of low, medium, high, critical',
    ],
    ['an unknown default', 'default = "maybe"', 'default must be one of allow, deny, ask, defer'],
    [
      'an unknown default risk',
      'default_risk = 3',
      'default_risk must be one of low, medium, high, critical',
    ],
    ['a rule without an action', '[[rule]]\nname = "mine"', 'rule 1 ("mine"): action is required'],
    [
      'a typo in a rule whose name is not a string',
      '[[rule]]\nname = 1\nactoin = "ask"',
      'rule 1: unknown key "actoin" (line 3)',
    ],
    [
      'a list that is not all strings',
      '[[rule]]\ncwd = ["/a", 1]\naction = "ask"',
      'rule 1: cwd must be a string or a list of strings',
    ],
    [
      'an empty path list',
      '[[rule]]\npath = []\naction = "ask"',
      'rule 1: path must be a string or a list of strings',
    ],
    [
      'a command that is a table',
      '[[rule]]\ncommand = { a = 1 }\naction = "ask"',
      'rule 1: command must be a string or a list of strings',
    ],
    [
      'a target that is not a string',
      '[[rule]]\naction = "ask"\ntarget = 1',
      'rule 1: target must be a string',
    ],
    [
      'flags other than i',
      '[[rule]]\ncommand_regex = "x"\ncommand_regex_flags = "m"\naction = "deny"',
      'rule 1: command_regex_flags must be one of i',
    ],
    [
      'flags with no regular expression',
      '[[rule]]\ncommand_regex_flags = "i"\naction = "deny"',
      'rule 1: command_regex_flags needs a command_regex',
    ],
    [
      'a bad regular expression',
      '[[rule]]\ncommand_regex = "(("\naction = "deny"',
      'rule 1: command_regex "((" is not a valid regular expression',
    ],
  ])('refuses %s, with policy_invalid and where', (_what, text, message) => {
    const error = refusal(text);
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).code).toBe('policy_invalid');
    expect((error as PolicyError).message).toMatch(message);
  });

  it.each([4, 86_401, 30.5, '60'])('refuses a timeout of %j seconds', (timeout) => {
    const error = refusal(`[[rule]]\naction = "ask"\ntimeout_seconds = ${JSON.stringify(timeout)}`);
    expect((error as PolicyError).message).toBe(
      'rule 1: timeout_seconds must be whole seconds from 5 to 86400',
    );
  });

  it.each([5, 86_400])('takes a timeout of %j seconds, the ends of the range', (timeout) => {
    const policy = parsePolicy(`[[rule]]\naction = "ask"\ntimeout_seconds = ${timeout}`);
    expect(evaluatePolicy(policy, { tool: 'Bash', paths: [] })).toMatchObject({ timeoutSeconds: timeout });
  });
});

describe('a policy with nothing said', () => {
  it('asks at medium risk, and names a rule without a name by its place', () => {
    const policy = parsePolicy('[[rule]]\ntool = "Write"\naction = "deny"');
    expect(evaluatePolicy(policy, { tool: 'Bash', paths: [] })).toEqual({
      action: 'ask',
      risk: 'medium',
      rule: 'default',
    });
    expect(evaluatePolicy(policy, { tool: 'Write', paths: [] })).toEqual({
      action: 'deny',
      risk: 'medium',
      rule: 'rule 1',
    });
    expect(parsePolicy('').rules).toEqual([]);
  });
});

// Parsed in each test, not when the file is collected: Stryker's mutants are switched per test.
const CONDITIONS = `
default = "deny"
default_risk = "low"
[[rule]]
name = "no command"
command = "*"
tool = "Read"
action = "allow"
[[rule]]
name = "no regex"
command_regex = "."
tool = "Grep"
action = "allow"
[[rule]]
name = "paths"
path = ["/srv/*", "*.env"]
action = "ask"
risk = "high"
[[rule]]
name = "cwd"
cwd = "/work/*"
action = "allow"
[[rule]]
name = "tools"
tool = ["mcp__db__*", "Web?etch"]
action = "defer"
`;

describe('each condition of a rule', () => {
  const verdict = (call: Partial<GatedCall>) =>
    evaluatePolicy(parsePolicy(CONDITIONS), { tool: 'Edit', paths: [], ...call });
  const judged = (call: Partial<GatedCall>) => verdict(call).rule;

  it('needs a command to match a rule that names one', () => {
    // A call without a command is not any command: a rule about commands does not speak for it.
    expect(judged({ tool: 'Read' })).toBe('default');
    expect(judged({ tool: 'Read', command: 'ls' })).toBe('no command');
    expect(judged({ tool: 'Grep' })).toBe('default');
    expect(judged({ tool: 'Grep', command: 'x' })).toBe('no regex');
  });

  it('matches a path when any path of the call matches any glob', () => {
    expect(judged({ paths: ['notes.txt', '/srv/app.yml'] })).toBe('paths');
    expect(judged({ paths: ['prod.env'] })).toBe('paths');
    expect(judged({ paths: ['/srv'] })).toBe('default');
    expect(judged({ paths: [] })).toBe('default');
  });

  it('needs a cwd to match a rule that names one', () => {
    expect(judged({ cwd: '/work/app' })).toBe('cwd');
    expect(judged({ cwd: '/home/work/app' })).toBe('default');
    expect(judged({})).toBe('default');
    // Not even a rule whose cwd is any folder at all.
    const anyFolder = parsePolicy('[[rule]]\ncwd = "*"\naction = "allow"');
    expect(evaluatePolicy(anyFolder, { tool: 'Edit', paths: [] }).rule).toBe('default');
  });

  it('gives the rule’s risk, timeout and target with its answer', () => {
    const policy = parsePolicy(
      '[[rule]]\nname = "prod"\npath = "/srv/*"\naction = "ask"\nrisk = "critical"\ntimeout_seconds = 60\ntarget = "production"',
    );
    expect(evaluatePolicy(policy, { tool: 'Write', paths: ['/srv/app'] })).toEqual({
      action: 'ask',
      risk: 'critical',
      rule: 'prod',
      timeoutSeconds: 60,
      target: 'production',
    });
  });

  it('matches a tool against any glob of a list', () => {
    expect(judged({ tool: 'mcp__db__drop' })).toBe('tools');
    expect(judged({ tool: 'WebFetch' })).toBe('tools');
    expect(judged({ tool: 'mcp__dbx__drop' })).toBe('default');
    expect(verdict({})).toEqual({ action: 'deny', risk: 'low', rule: 'default' });
  });
});

describe('a glob', () => {
  it.each([
    ['*', ['', 'a b/c', 'line\nline'], []],
    ['a**b', ['ab', 'a/x/b'], ['a']],
    ['a?c', ['abc', 'a/c'], ['ac', 'abbc']],
    ['[ch]at', ['cat', 'hat'], ['bat', '[ch]at']],
    ['a[b', ['a[b'], ['ab']],
    ['a[\\]b', ['a\\b'], ['a]b', 'ab']],
    ['a][bc]', ['a]b', 'a]c'], ['a][bc]']],
    ['v1.0+(x)|{y}$^/', ['v1.0+(x)|{y}$^/'], ['v1x0+(x)|{y}$^/', 'v1.00(x)|{y}$^/']],
  ])('%j matches the whole of what it says, and only that', (glob, matched, unmatched) => {
    const regex = globToRegExp(glob);
    for (const text of matched) expect(regex.test(text), text).toBe(true);
    for (const text of unmatched) expect(regex.test(text), text).toBe(false);
    // Matched without a regular expression, for globs a project's files give: the same answers.
    for (const text of matched) expect(globMatches(glob, text), text).toBe(true);
    for (const text of unmatched) expect(globMatches(glob, text), text).toBe(false);
  });

  it('is matched without backtracking the same as by its regular expression', () => {
    const glob = fc.stringMatching(/^[ab*?.\/[\]!]{0,8}$/);
    const text = fc.stringMatching(/^[ab./[\]!]{0,10}$/);
    fc.assert(
      fc.property(
        glob,
        text,
        (pattern, value) => globMatches(pattern, value) === globToRegExp(pattern).test(value),
      ),
      { numRuns: 5000 },
    );
  });
});
