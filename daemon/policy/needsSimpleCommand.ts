import type { PolicyRule } from './policy.ts';

/**
 * Whether a rule matches a call only when its command is wholly one simple command: every rule
 * that can let a call run without a phone (allow, and defer, whose prompt may auto-allow) and
 * names a command. Otherwise `ls -la` + a newline + `rm -rf /srv` would pass as `ls -la`.
 * Ask and deny rules match any command: asking or refusing more is the safe direction.
 */
export function needsSimpleCommand(rule: PolicyRule): boolean {
  return (
    (rule.action === 'allow' || rule.action === 'defer') &&
    (rule.command !== undefined || rule.commandRegex !== undefined)
  );
}
