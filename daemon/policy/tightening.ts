import { STRICTNESS, type Policy, type PolicyRule } from './policy.ts';
import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import { needsSimpleCommand } from './needsSimpleCommand.ts';

const riskRank = (risk: RiskLevel) => RISK_LEVELS.indexOf(risk);

function conditions(rule: PolicyRule): string {
  return JSON.stringify([
    rule.tool,
    rule.command,
    rule.commandRegex,
    rule.commandRegexFlags,
    rule.path,
    rule.cwd,
  ]);
}

function atLeastAsStrict(next: PolicyRule, previous: PolicyRule): boolean {
  return (
    STRICTNESS[next.action] >= STRICTNESS[previous.action] &&
    // The same conditions match more calls once a rule no longer needs a simple command (allow to
    // ask): calls that fell through to later rules, a deny perhaps, now stop here. Only a deny
    // may take them over.
    (needsSimpleCommand(next) === needsSimpleCommand(previous) || next.action === 'deny') &&
    riskRank(next.risk) >= riskRank(previous.risk) &&
    (next.action === 'allow' || next.action === 'deny' || asksAlike(next, previous))
  );
}

/**
 * A rule that asks keeps what its asking depends on. Grants a phone approved are keyed by the
 * rule's name (a rule renamed, or an unnamed one renumbered, takes over another rule's grants);
 * its target is what the person types to approve; a wait only shortens. With no wait of its own
 * a rule takes the config's, which this cannot compare, so adding or removing one is loosening.
 */
function asksAlike(next: PolicyRule, previous: PolicyRule): boolean {
  const waitsNoLonger =
    next.timeoutSeconds === undefined || previous.timeoutSeconds === undefined
      ? next.timeoutSeconds === previous.timeoutSeconds
      : next.timeoutSeconds <= previous.timeoutSeconds;
  return next.name === previous.name && next.target === previous.target && waitsNoLonger;
}

/**
 * Whether `next` can only be stricter than `previous`, for every possible call. Conservative:
 * anything it cannot show to be tightening counts as loosening, which takes a phone's approval.
 *
 * Tightening is: the default no looser; every rule that was not "allow" still there, in the same
 * order, no looser; rules added only if they deny; "allow" rules may go. (A removed "allow" rule
 * sends its calls to later rules, none of which can be looser than "allow".)
 */
export function isTightening(previous: Policy, next: Policy): boolean {
  if (STRICTNESS[next.defaultAction] < STRICTNESS[previous.defaultAction]) return false;
  if (riskRank(next.defaultRisk) < riskRank(previous.defaultRisk)) return false;

  let cursor = 0;
  for (const rule of next.rules) {
    // Advance through the previous rules, allowing only "allow" rules to be skipped (removed).
    let found = -1;
    for (let i = cursor; i < previous.rules.length; i++) {
      if (conditions(previous.rules[i]!) === conditions(rule)) {
        found = i;
        break;
      }
    }
    if (found >= 0 && previous.rules.slice(cursor, found).every((skipped) => skipped.action === 'allow')) {
      if (!atLeastAsStrict(rule, previous.rules[found]!)) return false;
      cursor = found + 1;
    } else if (rule.action !== 'deny') {
      return false;
    }
  }
  return previous.rules.slice(cursor).every((remaining) => remaining.action === 'allow');
}
