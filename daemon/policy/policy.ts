import { parse as parseToml } from 'smol-toml';
import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import { globToRegExp } from './glob.ts';

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
  commandRegex?: string;
  path?: string[];
  cwd?: string[];
  action: Action;
  risk: RiskLevel;
  timeoutSeconds?: number;
  /** What a person types to approve a critical request; default: the first path's last part. */
  target?: string;
}

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
  for (const key of Object.keys(document)) {
    if (!['default', 'default_risk', 'rule'].includes(key)) throw new PolicyError(`unknown setting "${key}"`);
  }
  const rawRules = document['rule'] ?? [];
  if (!Array.isArray(rawRules)) throw new PolicyError('rules are written [[rule]]');
  const rules = rawRules.map((raw: unknown, index): PolicyRule => {
    if (typeof raw !== 'object' || raw === null) throw new PolicyError(`rule ${index + 1} is not a table`);
    const entry = raw as Record<string, unknown>;
    const where = `rule ${index + 1}${typeof entry['name'] === 'string' ? ` ("${entry['name']}")` : ''}`;
    for (const key of Object.keys(entry)) {
      if (!RULE_KEYS.has(key)) throw new PolicyError(`${where}: unknown key "${key}"`);
    }
    const commandRegex = entry['command_regex'];
    if (commandRegex !== undefined) {
      if (typeof commandRegex !== 'string') throw new PolicyError(`${where}: command_regex must be a string`);
      try {
        new RegExp(commandRegex);
      } catch {
        throw new PolicyError(`${where}: command_regex is not a valid regular expression`);
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
      ...(typeof commandRegex === 'string' ? { commandRegex } : {}),
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
}

// Compiled once per pattern: the policy is evaluated on every gated call.
const compiled = new Map<string, RegExp>();
function pattern(source: string, compile: (source: string) => RegExp): RegExp {
  let regExp = compiled.get(source);
  if (!regExp) compiled.set(source, (regExp = compile(source)));
  return regExp;
}
const glob = (source: string) => pattern(`glob:${source}`, () => globToRegExp(source));
const regex = (source: string) => pattern(`regex:${source}`, () => new RegExp(source));

const anyMatch = (globs: string[] | undefined, values: string[]) =>
  globs === undefined || values.some((value) => globs.some((source) => glob(source).test(value)));

/** The first rule whose every condition holds decides; none holding, the default does. */
export function evaluatePolicy(policy: Policy, call: GatedCall): Verdict {
  for (const rule of policy.rules) {
    const command = call.command;
    const matches =
      anyMatch(rule.tool, [call.tool]) &&
      (rule.command === undefined || (command !== undefined && anyMatch(rule.command, [command]))) &&
      (rule.commandRegex === undefined ||
        (command !== undefined && regex(rule.commandRegex).test(command))) &&
      (rule.path === undefined || anyMatch(rule.path, call.paths)) &&
      (rule.cwd === undefined || (call.cwd !== undefined && anyMatch(rule.cwd, [call.cwd])));
    if (matches) {
      return {
        action: rule.action,
        risk: rule.risk,
        rule: rule.name,
        ...(rule.timeoutSeconds ? { timeoutSeconds: rule.timeoutSeconds } : {}),
        ...(rule.target ? { target: rule.target } : {}),
      };
    }
  }
  return { action: policy.defaultAction, risk: policy.defaultRisk, rule: 'default' };
}
