import { describe, expect, it } from 'vitest';
import type { Policy, PolicyRule } from '../../daemon/policy/policy.ts';
import { isTightening } from '../../daemon/policy/tightening.ts';

// What takes effect at once without a phone (a tightening) and what waits for one, rule by rule, in
// this process (policy.test.ts covers the common edits; the daemon applies it in policyKeeper.ts).
const readsAllowed: PolicyRule = { name: 'reads', tool: ['Read'], action: 'allow', risk: 'low' };
const pushesAsked: PolicyRule = {
  name: 'pushes',
  tool: ['Bash'],
  commandRegex: ['git push'],
  commandRegexFlags: 'i',
  cwd: ['/home/dev/*'],
  action: 'ask',
  risk: 'high',
  timeoutSeconds: 60,
};
const secretsAsked: PolicyRule = { name: 'secrets', path: ['~/.ssh/*'], action: 'ask', risk: 'critical' };
const testsAllowed: PolicyRule = {
  name: 'tests',
  tool: ['Bash'],
  command: ['npm test'],
  action: 'allow',
  risk: 'low',
};
const base: Policy = {
  defaultAction: 'ask',
  defaultRisk: 'medium',
  rules: [readsAllowed, pushesAsked, testsAllowed, secretsAsked],
};
const withPushes = (change: Partial<PolicyRule>): Policy => ({
  ...base,
  rules: [readsAllowed, { ...pushesAsked, ...change }, testsAllowed, secretsAsked],
});

describe('a change of the policy that takes effect at once', () => {
  it.each<[string, Policy]>([
    ['the same policy', base],
    ['a stricter default risk', { ...base, defaultRisk: 'high' }],
    ['a deny by default', { ...base, defaultAction: 'deny' }],
    ['a shorter timeout', withPushes({ timeoutSeconds: 30 })],
    ['a higher risk', withPushes({ risk: 'critical' })],
    ['an allow rule in the middle removed', { ...base, rules: [readsAllowed, pushesAsked, secretsAsked] }],
    ['every allow rule removed', { ...base, rules: [pushesAsked, secretsAsked] }],
    [
      'an allow rule made deny',
      { ...base, rules: [{ ...readsAllowed, action: 'deny' }, pushesAsked, secretsAsked] },
    ],
    [
      'an allow rule made ask',
      { ...base, rules: [{ ...readsAllowed, action: 'ask' }, pushesAsked, secretsAsked] },
    ],
    [
      'an allow-by-command rule made deny (it takes over the calls it let through)',
      { ...base, rules: [readsAllowed, pushesAsked, { ...testsAllowed, action: 'deny' }, secretsAsked] },
    ],
    [
      'a deny rule added at the end',
      { ...base, rules: [...base.rules, { name: 'curl', tool: ['Bash'], action: 'deny', risk: 'high' }] },
    ],
  ])('%s', (_what, next) => {
    expect(isTightening(base, next)).toBe(true);
  });
});

describe('a change of the policy that waits for a phone', () => {
  it.each<[string, Policy]>([
    ['a lower default risk', { ...base, defaultRisk: 'low' }],
    ['a deferring default', { ...base, defaultAction: 'defer' }],
    ['a longer timeout', withPushes({ timeoutSeconds: 61 })],
    ['no timeout in place of one', withPushes({ timeoutSeconds: undefined })],
    [
      "a timeout where the config's applied (even a short one: the config's may be shorter)",
      { ...base, rules: [readsAllowed, pushesAsked, testsAllowed, { ...secretsAsked, timeoutSeconds: 5 }] },
    ],
    // Grants a phone approved are keyed by the rule's name.
    ['a renamed rule (it takes over the grants of its new name)', withPushes({ name: 'git pushes' })],
    ['another target to type', withPushes({ target: 'y' })],
    ['a lower risk', withPushes({ risk: 'medium' })],
    // Changed conditions make another rule: the old one, an ask, is gone.
    ['another tool', withPushes({ tool: ['exec'] })],
    ['another command pattern', withPushes({ commandRegex: ['git  push'] })],
    ['case-sensitive patterns', withPushes({ commandRegexFlags: undefined })],
    ['another folder', withPushes({ cwd: ['/home/*'] })],
    ['a path condition', withPushes({ path: ['/home/dev/*'] })],
    ['an exact command in place of patterns', withPushes({ commandRegex: undefined, command: ['git push'] })],
    [
      'a path rule made allow',
      { ...base, rules: [readsAllowed, pushesAsked, testsAllowed, { ...secretsAsked, action: 'allow' }] },
    ],
    ['an ask rule removed', { ...base, rules: [readsAllowed, testsAllowed, secretsAsked] }],
    ['the last ask rule removed', { ...base, rules: [readsAllowed, pushesAsked, testsAllowed] }],
    ['two ask rules swapped', { ...base, rules: [readsAllowed, secretsAsked, pushesAsked] }],
    [
      'an ask rule added',
      { ...base, rules: [...base.rules, { name: 'more', tool: ['Bash'], action: 'ask', risk: 'high' }] },
    ],
    [
      'a defer rule added',
      { ...base, rules: [{ name: 'edits', tool: ['Edit'], action: 'defer', risk: 'low' }, ...base.rules] },
    ],
    // An ask by command stops calls that an allow by command let fall through to a later deny.
    [
      'an allow-by-command rule made ask',
      { ...base, rules: [readsAllowed, pushesAsked, { ...testsAllowed, action: 'ask' }, secretsAsked] },
    ],
  ])('%s', (_what, next) => {
    expect(isTightening(base, next)).toBe(false);
  });

  it('lets a trailing allow rule go, but not a trailing ask', () => {
    const trailingAllow: Policy = { ...base, rules: [...base.rules, testsAllowed] };
    expect(isTightening(trailingAllow, base)).toBe(true);
    expect(isTightening({ ...base, rules: [...base.rules, pushesAsked] }, base)).toBe(false);
  });

  it('counts a defer as looser than an ask: the agent may allow it on its own', () => {
    const defers: Policy = { ...base, defaultAction: 'defer' };
    expect(isTightening(defers, base)).toBe(true);
    expect(isTightening(base, withPushes({ action: 'defer' }))).toBe(false);
  });
});
