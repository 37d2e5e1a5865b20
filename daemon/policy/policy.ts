import { parse as parseToml } from 'smol-toml';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { tomlKeyLine } from '../config/tomlKeyLine.ts';
import { globToRegExp } from './glob.ts';
import { needsSimpleCommand } from './needsSimpleCommand.ts';
import { scanSimpleCommand } from './scanSimpleCommand.ts';

/**
 * What a rule can answer. `defer` hands the call to the agent's own permission prompt
 * (Claude Code's "ask"); where there is none (SDK, MCP, latch request) it is an `ask`.
 */
export const ACTIONS = ['allow', 'deny', 'ask', 'defer'] as const;
export type Action = (typeof ACTIONS)[number];

export interface PolicyRule {
  name: string;
  tool?: string[];
  command?: string[];
  /** Regular expressions searched in the command; any one matching is enough. */
  commandRegex?: string[];
  /** `i`: the regular expressions ignore case. */
  commandRegexFlags?: CommandRegexFlags;
  path?: string[];
  cwd?: string[];
  action: Action;
  risk: RiskLevel;
  timeoutSeconds?: number;
  /** What a person types to approve a critical request; default: the first path's last part. */
  target?: string;
}

/**
 * The only flag a rule may give its regular expressions. `m` would let `^…$` match one line of a
 * many-line command, and `g` or `y` make a regular expression remember where it last stopped.
 */
const COMMAND_REGEX_FLAGS = ['i'] as const;
export type CommandRegexFlags = (typeof COMMAND_REGEX_FLAGS)[number];
const isCommandRegexFlags = (value: unknown): value is CommandRegexFlags =>
  (COMMAND_REGEX_FLAGS as readonly unknown[]).includes(value);

export interface Policy {
  defaultAction: Action;
  defaultRisk: RiskLevel;
  rules: PolicyRule[];
}

export class PolicyError extends Error {
  readonly code = 'policy_invalid';
}

const RULE_KEYS = new Set([
  'name',
  'tool',
  'command',
  'command_regex',
  'command_regex_flags',
  'path',
  'cwd',
  'action',
  'risk',
  'timeout_seconds',
  'target',
]);

function strings(value: unknown, where: string): string[] | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((item) => typeof item === 'string')) {
    throw new PolicyError(`${where} must be a string or a list of strings`);
  }
  return list as string[];
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], where: string, fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new PolicyError(`${where} must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** Parses a policy file. Anything unknown or malformed is an error: a typo must not loosen it. */
export function parsePolicy(text: string): Policy {
  let document: Record<string, unknown>;
  try {
    document = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw new PolicyError(`not valid TOML: ${(error as Error).message.split('\n')[0]}`);
  }
  // Where a typo is: smol-toml says where the TOML breaks, not where a well-formed typo is.
  const onLine = (key: string[]) => {
    const line = tomlKeyLine(text, key);
    return line ? ` (line ${line})` : '';
  };
  for (const key of Object.keys(document)) {
    if (!['default', 'default_risk', 'rule'].includes(key))
      throw new PolicyError(`unknown setting "${key}"${onLine([key])}`);
  }
  const rawRules = document['rule'] ?? [];
  if (!Array.isArray(rawRules)) throw new PolicyError('rules are written [[rule]]');
  const rules = rawRules.map((raw: unknown, index): PolicyRule => {
    if (typeof raw !== 'object' || raw === null) throw new PolicyError(`rule ${index + 1} is not a table`);
    const entry = raw as Record<string, unknown>;
    const where = `rule ${index + 1}${typeof entry['name'] === 'string' ? ` ("${entry['name']}")` : ''}`;
    for (const key of Object.keys(entry)) {
      // The first rule with this typo is this one: an earlier one would have been refused first.
      if (!RULE_KEYS.has(key))
        throw new PolicyError(`${where}: unknown key "${key}"${onLine(['rule', key])}`);
    }
    const commandRegex = strings(entry['command_regex'], `${where}: command_regex`);
    const commandRegexFlags = entry['command_regex_flags'];
    if (commandRegexFlags !== undefined && !isCommandRegexFlags(commandRegexFlags))
      throw new PolicyError(`${where}: command_regex_flags must be one of ${COMMAND_REGEX_FLAGS.join(', ')}`);
    if (commandRegexFlags !== undefined && commandRegex === undefined)
      throw new PolicyError(`${where}: command_regex_flags needs a command_regex`);
    for (const source of commandRegex ?? []) {
      try {
        new RegExp(source, commandRegexFlags);
      } catch {
        throw new PolicyError(
          `${where}: command_regex ${JSON.stringify(source)} is not a valid regular expression`,
        );
      }
    }
    const timeout = entry['timeout_seconds'];
    if (
      timeout !== undefined &&
      (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 5 || timeout > 86_400)
    ) {
      throw new PolicyError(`${where}: timeout_seconds must be whole seconds from 5 to 86400`);
    }
    if (entry['action'] === undefined) throw new PolicyError(`${where}: action is required`);
    if (entry['target'] !== undefined && typeof entry['target'] !== 'string')
      throw new PolicyError(`${where}: target must be a string`);
    const rule: PolicyRule = {
      name: typeof entry['name'] === 'string' ? entry['name'] : `rule ${index + 1}`,
      action: oneOf(entry['action'], ACTIONS, `${where}: action`, 'ask'),
      risk: oneOf(entry['risk'], RISK_LEVELS, `${where}: risk`, 'medium'),
    };
    const tool = strings(entry['tool'], `${where}: tool`);
    const command = strings(entry['command'], `${where}: command`);
    const path = strings(entry['path'], `${where}: path`);
    const cwd = strings(entry['cwd'], `${where}: cwd`);
    return {
      ...rule,
      ...(tool ? { tool } : {}),
      ...(command ? { command } : {}),
      ...(commandRegex ? { commandRegex } : {}),
      ...(commandRegexFlags ? { commandRegexFlags } : {}),
      ...(path ? { path } : {}),
      ...(cwd ? { cwd } : {}),
      ...(typeof timeout === 'number' ? { timeoutSeconds: timeout } : {}),
      ...(typeof entry['target'] === 'string' ? { target: entry['target'] } : {}),
    };
  });
  return {
    defaultAction: oneOf(document['default'], ACTIONS, 'default', 'ask'),
    defaultRisk: oneOf(document['default_risk'], RISK_LEVELS, 'default_risk', 'medium'),
    rules,
  };
}

/** A call as the policy sees it. */
export interface GatedCall {
  tool: string;
  command?: string;
  paths: string[];
  cwd?: string;
}

export interface Verdict {
  action: Action;
  risk: RiskLevel;
  rule: string;
  timeoutSeconds?: number;
  target?: string;
  /** The place of Latch's own that its self-protection found the call reaching. */
  reaches?: string;
}

/**
 * The most bytes of a command that a rule may allow: what a phone shows of a request's detail
 * (LIMITS.detailBytes). The person asked could not read a longer command whole, and its unread
 * tail is where a second command would hide.
 */
export const LONG_COMMAND_BYTES = LIMITS.detailBytes;
const LONG_COMMAND = `command over ${LONG_COMMAND_BYTES} bytes, more than a phone shows`;

// Patterns are compiled once and found by the list that holds them, not by their text: keying a
// cache by the text hashed every long pattern on every call (most of a 5 µs decision).
const compiled = new WeakMap<readonly string[], RegExp[]>();
function compiledOnce(sources: readonly string[], compile: (source: string) => RegExp): RegExp[] {
  let regexes = compiled.get(sources);
  if (!regexes) compiled.set(sources, (regexes = sources.map(compile)));
  return regexes;
}
const commandRegexes = (rule: PolicyRule & { commandRegex: string[] }) =>
  compiledOnce(rule.commandRegex, (source) => new RegExp(source, rule.commandRegexFlags));

const matchesGlob = (globs: string[], value: string) =>
  compiledOnce(globs, globToRegExp).some((regex) => regex.test(value));

/** One call, with what is worked out about its command at most once per evaluation. */
interface Evaluated extends GatedCall {
  simple?: boolean;
}

function commandMatches(rule: PolicyRule, call: Evaluated, command: string): boolean {
  if (rule.command !== undefined && !matchesGlob(rule.command, command)) return false;
  if (
    rule.commandRegex !== undefined &&
    !commandRegexes(rule as PolicyRule & { commandRegex: string[] }).some((regex) => regex.test(command))
  )
    return false;
  return !needsSimpleCommand(rule) || (call.simple ??= scanSimpleCommand(command).simple);
}

function matches(rule: PolicyRule, call: Evaluated): boolean {
  if (rule.tool !== undefined && !matchesGlob(rule.tool, call.tool)) return false;
  if (call.command !== undefined) {
    if (!commandMatches(rule, call, call.command)) return false;
  } else if (rule.command !== undefined || rule.commandRegex !== undefined) return false;
  if (rule.path !== undefined && !call.paths.some((path) => matchesGlob(rule.path!, path))) return false;
  return rule.cwd === undefined || (call.cwd !== undefined && matchesGlob(rule.cwd, call.cwd));
}

const verdictOf = (rule: PolicyRule): Verdict => ({
  action: rule.action,
  risk: rule.risk,
  rule: rule.name,
  ...(rule.timeoutSeconds ? { timeoutSeconds: rule.timeoutSeconds } : {}),
  ...(rule.target ? { target: rule.target } : {}),
});

/**
 * The first rule whose every condition holds decides; none holding, the default does. Rules see
 * the whole command as the agent sent it. A rule that could let it run without a phone matches
 * only one simple command (needsSimpleCommand), and no rule allows a command over
 * LONG_COMMAND_BYTES.
 */
export function evaluatePolicy(policy: Policy, call: GatedCall): Verdict {
  const evaluated: Evaluated = { ...call };
  if (call.command !== undefined && utf8Length(call.command) > LONG_COMMAND_BYTES) {
    // Asked at critical risk, whatever rule would match, unless a deny rule or a default of deny
    // refuses it: only deny rules are tried (refusing is always safe, and the other rules'
    // patterns need not run over up to 1 MiB of command).
    const deny = policy.rules.find((rule) => rule.action === 'deny' && matches(rule, evaluated));
    if (deny) return verdictOf(deny);
    return { action: policy.defaultAction === 'deny' ? 'deny' : 'ask', risk: 'critical', rule: LONG_COMMAND };
  }
  const rule = policy.rules.find((candidate) => matches(candidate, evaluated));
  return rule ? verdictOf(rule) : { action: policy.defaultAction, risk: policy.defaultRisk, rule: 'default' };
}
