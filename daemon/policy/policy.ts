import { isAbsolute, posix } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { utf8Length } from '../../shared/encoding/bytes.ts';
import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { homeFolder } from '../config/paths.ts';
import { tomlKeyLine } from '../config/tomlKeyLine.ts';
import { globToRegExp } from './glob.ts';
import { needsSimpleCommand } from './needsSimpleCommand.ts';
import { asWalked, realPath, type PathWalk } from './realPath.ts';
import { scanSimpleCommand } from './scanSimpleCommand.ts';

/**
 * What a rule can answer. `defer` hands the call to the agent's own permission prompt
 * (Claude Code's "ask"); where there is none (SDK, MCP, latch request) it is an `ask`.
 */
export const ACTIONS = ['allow', 'deny', 'ask', 'defer'] as const;
export type Action = (typeof ACTIONS)[number];
/** From loosest to strictest. `defer` is looser than `ask`: the agent's own prompt may auto-allow. */
export const STRICTNESS: Record<Action, number> = { allow: 0, defer: 1, ask: 2, deny: 3 };

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
const compiledFolded = new WeakMap<readonly string[], RegExp[]>();
function compiledOnce(
  sources: readonly string[],
  compile: (source: string) => RegExp,
  cache = compiled,
): RegExp[] {
  let regexes = cache.get(sources);
  if (!regexes) cache.set(sources, (regexes = sources.map(compile)));
  return regexes;
}
const commandRegexes = (rule: PolicyRule & { commandRegex: string[] }) =>
  compiledOnce(rule.commandRegex, (source) => new RegExp(source, rule.commandRegexFlags));

const matchesGlob = (globs: string[], value: string) =>
  compiledOnce(globs, globToRegExp).some((regex) => regex.test(value));
const matchesGlobFolded = (globs: string[], value: string) =>
  compiledOnce(globs, (glob) => new RegExp(globToRegExp(glob).source, 'si'), compiledFolded).some((regex) =>
    regex.test(value),
  );

/** One way of spelling a call's paths and folder; `folded`: its globs ignore case. */
interface Spelling {
  paths: readonly string[];
  cwd: string | undefined;
  folded: boolean;
}

/** What is worked out about a call's command, at most once per evaluation. */
interface Facts {
  simple?: boolean;
  /** Whether a rule's tool and command hold, kept when the call has more than one spelling. */
  held?: Map<PolicyRule, boolean>;
}

function commandMatches(rule: PolicyRule, facts: Facts, command: string): boolean {
  if (rule.command !== undefined && !matchesGlob(rule.command, command)) return false;
  if (
    rule.commandRegex !== undefined &&
    !commandRegexes(rule as PolicyRule & { commandRegex: string[] }).some((regex) => regex.test(command))
  )
    return false;
  return !needsSimpleCommand(rule) || (facts.simple ??= scanSimpleCommand(command).simple);
}

function toolAndCommandMatch(rule: PolicyRule, call: GatedCall, facts: Facts): boolean {
  if (rule.tool !== undefined && !matchesGlob(rule.tool, call.tool)) return false;
  if (call.command !== undefined) return commandMatches(rule, facts, call.command);
  return rule.command === undefined && rule.commandRegex === undefined;
}

function matches(rule: PolicyRule, call: GatedCall, spelling: Spelling, facts: Facts): boolean {
  let held = facts.held?.get(rule);
  if (held === undefined) {
    held = toolAndCommandMatch(rule, call, facts);
    facts.held?.set(rule, held);
  }
  if (!held) return false;
  const place = spelling.folded ? matchesGlobFolded : matchesGlob;
  if (rule.path !== undefined && !spelling.paths.some((path) => place(rule.path!, path))) return false;
  return rule.cwd === undefined || (spelling.cwd !== undefined && place(rule.cwd, spelling.cwd));
}

/**
 * The spellings a call's paths and folder are judged under: as sent, and as the files they are
 * (walked through their links as the kernel walks them, as self-protection does), each with its
 * globs ignoring case too, since macOS's file system usually does: `.GIT/config`, and `g/config`
 * where `g` links to `.git`, are `.git/config`. Only the spelling as sent when no rule that may
 * apply to the tool names a path or folder: nothing else could differ, and no file is looked at.
 */
function spellings(policy: Policy, call: GatedCall): Spelling[] {
  const sent: Spelling = { paths: call.paths, cwd: call.cwd, folded: false };
  let byPath = false;
  let byFolder = false;
  for (const rule of policy.rules) {
    if ((rule.path || rule.cwd) && (rule.tool === undefined || matchesGlob(rule.tool, call.tool))) {
      byPath ||= rule.path !== undefined && call.paths.length > 0;
      byFolder ||= rule.cwd !== undefined && call.cwd !== undefined;
    }
  }
  if (!byPath && !byFolder) return [sent];
  const folder = call.cwd !== undefined && isAbsolute(call.cwd) ? call.cwd : undefined;
  const walk = { looks: new Map(), ...(folder !== undefined ? { processFolder: folder } : {}) };
  const paths = byPath ? call.paths.map((path) => walked(path, folder, walk)) : call.paths;
  const cwd = byFolder && folder !== undefined ? realPath(folder, walk) : call.cwd;
  const same = cwd === call.cwd && paths.every((path, index) => path === call.paths[index]);
  const folded: Spelling = { ...sent, folded: true };
  return same ? [sent, folded] : [sent, folded, { paths, cwd, folded: false }, { paths, cwd, folded: true }];
}

/** A path as the file it is; a relative one with no folder to walk it from, only taken out as text. */
function walked(path: string, folder: string | undefined, walk: PathWalk): string {
  const named = path.replace(/^~(?=\/|$)/, () => homeFolder());
  if (isAbsolute(named)) return realPath(named, walk);
  return folder !== undefined ? realPath(asWalked(folder, named), walk) : posix.normalize(named);
}

const verdictOf = (rule: PolicyRule): Verdict => ({
  action: rule.action,
  risk: rule.risk,
  rule: rule.name,
  ...(rule.timeoutSeconds ? { timeoutSeconds: rule.timeoutSeconds } : {}),
  ...(rule.target ? { target: rule.target } : {}),
});

const riskRank = (risk: RiskLevel) => RISK_LEVELS.indexOf(risk);
/** The stricter of two verdicts: by action, then by risk; the first on a tie. */
const stricter = (a: Verdict, b: Verdict): Verdict =>
  STRICTNESS[b.action] > STRICTNESS[a.action] ||
  (STRICTNESS[b.action] === STRICTNESS[a.action] && riskRank(b.risk) > riskRank(a.risk))
    ? b
    : a;

function firstMatch(policy: Policy, call: GatedCall, spelling: Spelling, facts: Facts): Verdict {
  const rule = policy.rules.find((candidate) => matches(candidate, call, spelling, facts));
  return rule ? verdictOf(rule) : { action: policy.defaultAction, risk: policy.defaultRisk, rule: 'default' };
}

/**
 * The first rule whose every condition holds decides; none holding, the default does. Rules see
 * the whole command as the agent sent it. A rule that could let it run without a phone matches
 * only one simple command (needsSimpleCommand), and no rule allows a command over
 * LONG_COMMAND_BYTES. Paths and the folder are judged under each of their spellings, and the
 * strictest verdict holds: a link or another case can only tighten what a path rule says.
 */
export function evaluatePolicy(policy: Policy, call: GatedCall): Verdict {
  const spelt = spellings(policy, call);
  // Under more than one spelling, a rule's command patterns run once, not once for each.
  const facts: Facts = spelt.length > 1 ? { held: new Map() } : {};
  if (call.command !== undefined && utf8Length(call.command) > LONG_COMMAND_BYTES) {
    // Asked at critical risk, whatever rule would match, unless a deny rule or a default of deny
    // refuses it: only deny rules are tried (refusing is always safe, and the other rules'
    // patterns need not run over up to 1 MiB of command).
    const deny = policy.rules.find(
      (rule) => rule.action === 'deny' && spelt.some((spelling) => matches(rule, call, spelling, facts)),
    );
    if (deny) return verdictOf(deny);
    return { action: policy.defaultAction === 'deny' ? 'deny' : 'ask', risk: 'critical', rule: LONG_COMMAND };
  }
  return spelt.map((spelling) => firstMatch(policy, call, spelling, facts)).reduce(stricter);
}
