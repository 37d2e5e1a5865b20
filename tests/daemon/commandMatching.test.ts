import { describe, expect, it } from 'vitest';
import { evaluatePolicy, LONG_COMMAND_BYTES, parsePolicy, PolicyError } from '../../daemon/policy/policy.ts';
import { isTightening } from '../../daemon/policy/tightening.ts';

const bash = (command: string) => ({ tool: 'Bash', command, paths: [] });
const LONG = `command over ${LONG_COMMAND_BYTES} bytes, more than a phone shows`;

describe('rules that name a command', () => {
  const policy = parsePolicy(`
default = "deny"
[[rule]]
name = "echo"
command = "echo *"
action = "allow"
[[rule]]
name = "tests"
command_regex = "^npm test"
action = "defer"
[[rule]]
name = "any npm"
command = "npm *"
action = "ask"
[[rule]]
name = "any shell"
tool = "Bash"
cwd = "/scratch"
action = "allow"
`);

  it('allow or defer only a command that is wholly one simple command', () => {
    expect(evaluatePolicy(policy, bash('echo hello'))).toMatchObject({ action: 'allow', rule: 'echo' });
    expect(evaluatePolicy(policy, bash('echo "a; rm -rf /"'))).toMatchObject({ action: 'allow' });
    expect(evaluatePolicy(policy, bash('echo hello; rm -rf /'))).toMatchObject({ rule: 'default' });
    expect(evaluatePolicy(policy, bash('echo hello\nrm -rf /'))).toMatchObject({ rule: 'default' });
    expect(evaluatePolicy(policy, bash('npm test'))).toMatchObject({ action: 'defer', rule: 'tests' });
    // Not simple: the defer rule passes it by, the ask rule (which needs no simple command) takes it.
    expect(evaluatePolicy(policy, bash('npm test && npm publish'))).toMatchObject({
      action: 'ask',
      rule: 'any npm',
    });
  });

  it('leave a rule without a command condition to match any command', () => {
    expect(evaluatePolicy(policy, { ...bash('make; make install'), cwd: '/scratch' })).toMatchObject({
      action: 'allow',
      rule: 'any shell',
    });
  });

  it('search a list of regular expressions, any one matching, ignoring case when asked', () => {
    const listed = parsePolicy(`
[[rule]]
name = "sql"
command_regex = ['drop\\s+table', 'truncate\\s']
command_regex_flags = "i"
action = "deny"
[[rule]]
name = "case-sensitive"
command_regex = ['^make$']
action = "allow"
`);
    expect(evaluatePolicy(listed, bash('psql -c "DROP TABLE users"')).action).toBe('deny');
    expect(evaluatePolicy(listed, bash('TRUNCATE users')).action).toBe('deny');
    expect(evaluatePolicy(listed, bash('make')).action).toBe('allow');
    expect(evaluatePolicy(listed, bash('MAKE')).rule).toBe('default');
  });

  it.each([
    ['a flag other than i', 'command_regex = "x"\ncommand_regex_flags = "m"'],
    ['two flags', 'command_regex = "x"\ncommand_regex_flags = "ig"'],
    ['flags that are not a string', 'command_regex = "x"\ncommand_regex_flags = true'],
    ['flags without a regular expression', 'command = "x"\ncommand_regex_flags = "i"'],
    ['a bad regular expression in a list', 'command_regex = ["ok", "(("]'],
    ['an empty list', 'command_regex = []'],
    ['Perl’s inline flag, which JavaScript does not read', 'command_regex = "(?i)drop"'],
  ])('refuse %s', (_what, rule) => {
    expect(() => parsePolicy(`[[rule]]\n${rule}\naction = "deny"\n`)).toThrow(PolicyError);
  });
});

describe(`a command over ${LONG_COMMAND_BYTES} bytes`, () => {
  const long = `ls ${'a'.repeat(LONG_COMMAND_BYTES)}`;
  const allowing = parsePolicy(`
[[rule]]
name = "ls"
command = "ls *"
action = "allow"
[[rule]]
name = "no aaaa"
command_regex = "aaaa"
action = "deny"
`);

  it('is asked at critical risk, not allowed by the rule that would allow it', () => {
    expect(evaluatePolicy(allowing, bash(`ls ${'b'.repeat(LONG_COMMAND_BYTES)}`))).toEqual({
      action: 'ask',
      risk: 'critical',
      rule: LONG,
    });
  });

  it('is still denied by a deny rule, even one after the rule that would allow it', () => {
    expect(evaluatePolicy(allowing, bash(long))).toMatchObject({ action: 'deny', rule: 'no aaaa' });
  });

  it('is denied where the default denies', () => {
    const strict = parsePolicy('default = "deny"\n[[rule]]\ncommand = "ls *"\naction = "allow"\n');
    expect(evaluatePolicy(strict, bash(long))).toMatchObject({ action: 'deny', rule: LONG });
  });

  it('is counted in UTF-8 bytes, as the phone counts what it shows', () => {
    const open = parsePolicy('[[rule]]\ncommand = "echo *"\naction = "allow"\n');
    const fits = `echo ${'é'.repeat((LONG_COMMAND_BYTES - 5) / 2)}`;
    expect(evaluatePolicy(open, bash(fits)).action).toBe('allow');
    expect(evaluatePolicy(open, bash(`${fits}é`))).toMatchObject({ action: 'ask', risk: 'critical' });
  });
});

describe('tightening, now that allow and defer rules need a simple command', () => {
  const rules = (...actions: string[]) =>
    parsePolicy(
      actions.map((action) => `[[rule]]\ntool = "Bash"\ncommand = "npm *"\naction = "${action}"\n`).join('') +
        '[[rule]]\ntool = "Bash"\naction = "deny"\n',
    );

  it.each([
    ['allow', 'defer'],
    ['allow', 'deny'],
    ['defer', 'deny'],
    ['ask', 'deny'],
  ])('counts %s made %s as tightening', (before, after) => {
    expect(isTightening(rules(before), rules(after))).toBe(true);
  });

  it.each([
    // npm x; rm -rf / fell through the allow rule to the deny; an ask rule would take it.
    ['allow', 'ask'],
    ['defer', 'ask'],
  ])('counts %s made %s as loosening', (before, after) => {
    expect(isTightening(rules(before), rules(after))).toBe(false);
  });

  it('counts a rule that starts ignoring case as loosening', () => {
    const before = parsePolicy('[[rule]]\ncommand_regex = "^make"\naction = "ask"\n');
    const after = parsePolicy(
      '[[rule]]\ncommand_regex = "^make"\ncommand_regex_flags = "i"\naction = "ask"\n',
    );
    expect(isTightening(before, after)).toBe(false);
  });
});
