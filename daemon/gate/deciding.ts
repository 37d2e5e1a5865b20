import { basename } from 'node:path';
import { similarCommandText } from '../../shared/approvals/similarCallText.ts';
import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import type { LatchConfig } from '../config/config.ts';
import type { ConfigKeeper } from '../config/configKeeper.ts';
import type { ConfigChange } from '../config/configTightening.ts';
import { unifiedDiff } from '../diff/unifiedDiff.ts';
import type { Grants } from '../grants/grants.ts';
import { proposeSimilar } from '../grants/proposeSimilar.ts';
import type { KillSwitch } from '../kill-switch/killSwitch.ts';
import { plainCommandWords } from '../policy/plainCommandWords.ts';
import { evaluatePolicy } from '../policy/policy.ts';
import type { PolicyKeeper } from '../policy/policyKeeper.ts';
import { protectedPlaces, withAgentConfigDir, withDaemonThreads } from '../policy/protectedPlaces.ts';
import { mayRunOtherCode, scriptsRun } from '../policy/scriptsRun.ts';
import { runsInAShell, selfProtection } from '../policy/selfProtection.ts';
import type { GateAnswer, GateRequest } from '../socket/localApi.ts';
import { deny, frozenDeny, reportedDeny } from './deny.ts';
import type { Loosening } from './loosening.ts';
import type { PushFatigue } from './pushFatigue.ts';
import type { AskTerms } from './requestDetails.ts';

export interface DecidingOptions {
  /** The config in force at start; `configKeeper` says what is in force from then on. */
  config: LatchConfig;
  configKeeper: ConfigKeeper;
  audit: AuditLog;
  killSwitch: KillSwitch;
  policy: PolicyKeeper;
  fatigue: PushFatigue;
  /** Rules phones allowed with an approval: docs/policy.md#grants. */
  grants: Grants;
  loosening: Loosening;
}

/** What this host makes of a call before any phone: an answer, or the terms to ask the phones on. */
export type Decision = { kind: 'answered'; answer: GateAnswer } | { kind: 'ask'; terms: AskTerms };

const answered = (answer: GateAnswer): Decision => ({ kind: 'answered', answer });

const strictest = (a: RiskLevel, b: RiskLevel | undefined): RiskLevel =>
  b !== undefined && RISK_LEVELS.indexOf(b) > RISK_LEVELS.indexOf(a) ? b : a;

/** An agent's command as the audit keeps it: cleaned and capped, like everything shown (it may be 1 MiB). */
/** A command as the audit keeps it: cleaned, and cut where a phone's detail is. */
export const forAudit = (command: string | undefined) =>
  command === undefined
    ? undefined
    : sanitizeText(command, { maxBytes: LIMITS.detailBytes, multiline: true }).text;

const describeChange = (change: ConfigChange) =>
  `${change.setting}: ${JSON.stringify(change.from)} → ${JSON.stringify(change.to)}${change.tightens ? '' : ' (looser)'}`;

/**
 * Decides a call on this host, in order: the kill switch, a reported session, the config and
 * the policy in force, Latch guarding itself, a grant a phone allowed. What none of them settles
 * goes to the phones, on the terms decided here. Also keeps the config in force for the gate.
 */
export class Deciding {
  readonly #options: DecidingOptions;
  /** Latch's own files, sockets and hook settings, where this daemon's environment puts them. */
  readonly #protectedPlaces = protectedPlaces();
  #config: LatchConfig;

  constructor(options: DecidingOptions) {
    this.#options = options;
    this.#config = options.config;
  }

  /** The config in force as of the last call decided (the one at start before any). */
  get config(): LatchConfig {
    return this.#config;
  }

  decide(request: GateRequest): Decision {
    const { killSwitch, policy, audit, fatigue, grants, loosening } = this.#options;
    const switchState = killSwitch.state;
    if (switchState.frozen) {
      audit.append({
        event: 'refused',
        blockReason: 'kill_switch',
        tool: request.tool,
        command: forAudit(request.command),
      });
      return answered(frozenDeny(switchState.reason));
    }
    // A person said "I didn't expect this" of this agent session: nothing more from it, not even
    // what the policy allows, until the report lapses.
    const reportedUntil = fatigue.reportedUntil(request, Date.now());
    if (reportedUntil !== undefined) {
      audit.append({
        event: 'refused',
        blockReason: 'reported',
        tool: request.tool,
        command: forAudit(request.command),
      });
      return answered(reportedDeny(reportedUntil));
    }
    const configView = this.#options.configKeeper.current();
    if (!configView.ok) {
      audit.append({
        event: 'refused',
        blockReason: 'config_invalid',
        tool: request.tool,
        message: configView.message,
      });
      return answered(deny('config_invalid', `config_invalid: ${configView.message}`));
    }
    this.#config = configView.config;
    if (configView.loosening)
      loosening.askToLoosen(
        'config',
        configView.loosening,
        configView.loosening.changes.map(describeChange).join('\n'),
      );
    const current = policy.current();
    if (!current.ok) {
      audit.append({
        event: 'refused',
        blockReason: 'policy_invalid',
        tool: request.tool,
        message: current.message,
      });
      return answered(deny('policy_invalid', `policy_invalid: ${current.message}`));
    }
    // The phone sees only what changed from the policy it approved last, not the whole new file.
    if (current.loosening)
      loosening.askToLoosen(
        'policy',
        current.loosening,
        '',
        unifiedDiff(current.loosening.approvedText, current.loosening.text, {
          from: 'a/policy.toml',
          to: 'b/policy.toml',
        }),
      );

    // The policy's verdict on the call, or on a command of it (a script it runs) in its place.
    const judged = (paths: string[], command: string | undefined) =>
      evaluatePolicy(current.policy, {
        tool: request.tool,
        paths,
        ...(command !== undefined ? { command } : {}),
        ...(request.cwd !== undefined ? { cwd: request.cwd } : {}),
      });
    const policyVerdict = judged(request.paths, request.command);
    // Latch guarding itself (docs/policy.md) outranks any policy answer but a deny, and never defers.
    const places = withDaemonThreads(
      request.agentConfigDir === undefined
        ? this.#protectedPlaces
        : withAgentConfigDir(
            this.#protectedPlaces,
            request.agent === 'codex' ? 'codex' : 'claude-code',
            request.agentConfigDir,
          ),
    );
    // A script the command runs is read once: self-protection reads it, and a phone is shown it.
    const scripts = runsInAShell(request) ? scriptsRun(request.command, request.cwd, places.variables) : [];
    // Codex tells its hooks neither a command's `workdir` nor the folder a patch applies in.
    const folderUnsure = request.agent === 'codex';
    const guarded = selfProtection({ ...request, scripts, folderUnsure }, places);
    const verdict = guarded && policyVerdict.action !== 'deny' ? guarded : policyVerdict;
    const rule = verdict === guarded ? `Latch's own rule "${verdict.rule}"` : `policy rule "${verdict.rule}"`;
    // Outside the agent's sandbox a command goes to the agent's own permission flow (or a phone)
    // even where a rule allows it: an allow here would skip the prompt the agent gives it there.
    const leftToAgent = request.unsandboxed === true && verdict.action === 'allow';
    if (verdict.action === 'allow' && !leftToAgent) {
      audit.append({
        event: 'allowed',
        via: 'policy',
        rule: verdict.rule,
        tool: request.tool,
        command: forAudit(request.command),
      });
      return answered({ decision: 'allow', reason: `allowed by ${rule}`, via: 'policy' });
    }
    if (verdict.action === 'deny') {
      audit.append({
        event: 'refused',
        blockReason: 'policy_violation',
        rule: verdict.rule,
        tool: request.tool,
        command: forAudit(request.command),
      });
      return answered(deny('policy_violation', `policy_violation: denied by ${rule}`));
    }
    if ((verdict.action === 'defer' || leftToAgent) && request.canDefer) {
      audit.append({ event: 'deferred', rule: verdict.rule, tool: request.tool });
      const reason = leftToAgent
        ? `${rule} allows this, but it runs outside the agent's sandbox: the agent's own prompt decides`
        : `${rule} leaves this to the agent's own prompt`;
      return answered({ decision: 'defer', reason });
    }
    // A shell script the command runs is judged by the policy as its own words would be: `bash
    // deploy.sh` that holds `curl … | sh` is as risky as that line typed, and the phone's badge
    // says so. Only the risk: what it asks is the command's rule. A line the policy refuses is
    // critical.
    const scriptRisks = scripts.flatMap((script) => {
      if (!script.shell || script.text === undefined) return [];
      const its = judged([], script.text);
      return [its.action === 'deny' ? 'critical' : its.risk];
    });
    const risk = [request.risk, ...scriptRisks].reduce(strictest, verdict.risk);
    // A rule a phone allowed covers only what the same policy rule asks, never what Latch guards.
    const asked = { policyRule: verdict.rule, risk, guarded: verdict === guarded };
    // Nor what may run code its words do not hold (a script, a shell or an interpreter, code an
    // option or a variable loads): a rule is matched by the words, and the code may change.
    const runsOtherCode = request.command !== undefined && mayRunOtherCode(request.command, places.variables);
    const granted =
      asked.guarded || request.unsandboxed || runsOtherCode ? undefined : grants.covering(request, asked);
    if (granted) {
      audit.append({
        event: 'allowed',
        via: 'grant',
        grant: granted.id,
        rule: verdict.rule,
        tool: request.tool,
        command: forAudit(request.command),
      });
      return answered({
        decision: 'allow',
        reason: `allowed by a rule approved on a phone (${similarCommandText(granted.similar)})`,
        via: 'grant',
      });
    }
    const similar = runsOtherCode ? undefined : proposeSimilar(request, asked);
    // The policy sets how long a phone may take; an agent may ask for less, never for more.
    const longest = verdict.timeoutSeconds ?? this.#config.approvals.timeoutSeconds;
    const timeoutSeconds = Math.min(request.timeoutSeconds ?? longest, longest);
    // A caller's target is typed only where the call itself spells it: one of its own choosing
    // ("staging" for a call whose input says production) would have a person confirm its claim.
    const callersTarget =
      request.target !== undefined && spells(request, request.target) ? request.target : undefined;
    const target = verdict.target ?? callersTarget ?? defaultTarget(request);
    // Latch's own rule says so on the card, and what it guards there: the word to type may be a
    // folder's name the command itself does not spell (`rm -rf ~` reaches ~/.config/systemd).
    const ownRule = asked.guarded
      ? { ownRule: `Asked by Latch's own rule "${verdict.rule}", for ${verdict.reaches ?? target}.` }
      : {};
    return {
      kind: 'ask',
      terms: { risk, timeoutSeconds, target, scripts, ...ownRule, ...(similar ? { similar } : {}) },
    };
  }
}

/** The fewest letters a caller's target may have: one letter is no reading of the call. */
const FEWEST_TARGET_LETTERS = 3;

/**
 * Whether what a call runs or acts on spells this word whole: a word of its command, a whole
 * string of its input (a key or a value), a path or a path's last name. Part of a word is no
 * reading of it (`e` in `deploy`, `stag` in `staging`).
 */
function spells(request: GateRequest, word: string): boolean {
  if (word.trim().length < FEWEST_TARGET_LETTERS) return false;
  return (
    request.paths.some((path) => path === word || basename(path) === word) ||
    (request.input?.includes(JSON.stringify(word)) ?? false) ||
    (request.command?.split(/[\s'"`;|&()<>=,]+/).includes(word) ?? false)
  );
}

/**
 * What a person types to approve a critical call no rule named a target for: the last part of
 * its first path; for a plain command, the last part of its last word that is not an option
 * (`rm -rf /var/lib/postgresql`: postgresql), which makes them read what it acts on, or its
 * program; for any other command, its last word as written (`… | sh`: sh), which makes them read
 * its end, where a long command hides what it does; else the tool.
 */
function defaultTarget(request: GateRequest): string {
  if (request.paths[0]) return basename(request.paths[0]);
  if (request.command === undefined) return request.tool;
  const words = plainCommandWords(request.command);
  const object = words
    ? (words
        .slice(1)
        .reverse()
        .find((word) => !word.startsWith('-') && basename(word) !== '') ?? words[0])
    : lastWord(request.command);
  return (object && basename(object)) || request.tool;
}

/**
 * A command's last word, without the quotes, separators and brackets around it. Read back from
 * the end, not with a pattern: one searched from every start is quadratic in a MiB-long word.
 */
function lastWord(command: string): string | undefined {
  const isSeparator = (at: number) => /[\s;&|()<>'"`$\\{}]/.test(command[at]!);
  let end = command.length;
  while (end > 0 && isSeparator(end - 1)) end--;
  let start = end;
  while (start > 0 && !isSeparator(start - 1)) start--;
  return start < end ? command.slice(start, end) : undefined;
}
