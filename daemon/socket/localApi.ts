import { utf8Length } from '../../shared/encoding/bytes.ts';
import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { cutToStartAndEnd } from '../../shared/text/keepStartAndEnd.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';
import { MOST_DIFF_BYTES } from '../hooks/fileEditDiff.ts';
import { PATH_MAX } from '../policy/realPath.ts';
import { jsonObjectLine } from './jsonObjectLine.ts';
import { RESERVED_AGENT } from './reservedAgent.ts';
import { toolInputText } from './toolInputText.ts';

/**
 * The daemon's local API, spoken over its Unix socket by hooks, `latch request`, `latch exec`,
 * the SDK and the MCP gate. Callers are agents: every string shown is cleaned here, every size
 * capped. What the policy and self-protection judge (the tool, its paths, folder, command and
 * input) is kept exactly as sent: over its cap a request is refused, never cut, since a cut path
 * or input names another file than the one the tool opens.
 */
export interface GateRequest {
  /** Which agent asks, e.g. "claude-code". */
  agent: string;
  tool: string;
  /** As sent, neither cleaned nor cut: the gatekeeper cleans and cuts it for display. */
  command?: string;
  /** As sent, like the folder: each one at most PATH_MAX bytes. */
  paths: string[];
  cwd?: string;
  /** The tool's input as JSON text, shown when there is no command; as sent, like the command. */
  input?: string;
  title?: string;
  detail?: string;
  /** What a file edit changes, as a unified diff (hooks/fileEditDiff): start and end kept when long. */
  diff?: string;
  /**
   * The agent's config folder as its own environment names it (CLAUDE_CONFIG_DIR, CODEX_HOME, or
   * the default under its HOME): its hook settings are guarded there too (policy/protectedPlaces).
   */
  agentConfigDir?: string;
  /** The caller's own risk estimate: the stricter of it and the policy's counts. */
  risk?: RiskLevel;
  target?: string;
  /** Agent session and tool call: one request per pair, duplicates join it. */
  session?: string;
  toolUseId?: string;
  timeoutSeconds?: number;
  /** The caller can run a fallback on the terminal (/dev/tty) if no phone can be reached. */
  interactive: boolean;
  /** The caller has a native prompt to defer to (Claude Code's PreToolUse). */
  canDefer: boolean;
  /**
   * The command is to run outside the agent's sandbox (Claude Code's `dangerouslyDisableSandbox`):
   * it goes to the agent's own permission flow, or a phone, never past either on a rule of Latch's.
   */
  unsandboxed?: boolean;
  /** Cleaning changed some text: the phone shows the "text shortened" mark. */
  shortened: boolean;
}

export type BlockReason =
  | 'kill_switch'
  | 'policy_violation'
  | 'denied'
  | 'expired'
  | 'relay_unreachable'
  | 'not_paired'
  | 'policy_invalid'
  | 'config_invalid'
  | 'fallback_failed'
  // Push-fatigue defences (docs/security.md): a session a phone reported; an approval before its hold.
  | 'reported'
  | 'too_soon'
  // The daemon could not record the call (a full disk, an I/O error): never run unrecorded.
  | 'not_recorded'
  // Said by clients, when the daemon itself cannot be trusted or reached:
  | 'daemon_unreachable'
  | 'insecure_socket_path'
  | 'config_missing'
  // The call itself: refused by the daemon as sent, or one that cannot be sent.
  | 'invalid_request';

export type GateAnswer =
  | { decision: 'allow'; reason: string; via: AllowedVia; requestId?: string }
  | { decision: 'deny'; reason: string; blockReason: BlockReason; requestId?: string }
  | { decision: 'defer'; reason: string };

const ALLOWED_VIA = ['policy', 'phone', 'grant', 'totp', 'challenge'] as const;
export type AllowedVia = (typeof ALLOWED_VIA)[number];

/** A terminal fallback the daemon offers when no phone can be reached; answered on the same connection. */
export interface FallbackOffer {
  requestId: string;
  method: 'totp' | 'challenge';
  reason: string;
  prompt: string;
  exp: number;
}

/**
 * What the daemon writes on a gate conversation, one JSON line each: `pending` once a phone is
 * asked, `fallback` when it offers the terminal instead, and last the `answer`; or, for a
 * request it cannot read, `refused` alone. The client writes the gate request, then, if offered
 * a fallback, `{ "fallbackAnswer": "…" }` (`null` declines).
 */
export type GateLine =
  | { pending: { requestId: string; exp: number } }
  | { fallback: FallbackOffer }
  | { answer: GateAnswer }
  | { refused: { code: string; message: string } };

const isString = (value: unknown): value is string => typeof value === 'string';
const isTime = (value: unknown): value is number => Number.isSafeInteger(value);

/** The most a door passes on of the daemon's words: an agent shows them, a terminal prints them. */
const SHOWN_BYTES = 4096;
const shown = (text: string, multiline = false) =>
  sanitizeText(text, { maxBytes: SHOWN_BYTES, multiline }).text;

/**
 * The code of a caller past one of the daemon's connection budgets (a gate `refused` line, or an
 * HTTP 503's `error`): the daemon runs, but will not take this caller now. Clients deny with its message.
 */
export const DAEMON_BUSY = 'daemon_busy';

/** The message of an HTTP answer's `{ error }` that says the daemon is busy, cleaned; else undefined. */
export function busyMessage(body: unknown): string | undefined {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return error?.code === DAEMON_BUSY && isString(error.message) ? shown(error.message) : undefined;
}

/**
 * A client reads the daemon's line: anything not exactly one of these shapes is no answer. What
 * it shows is cleaned and capped, whoever answered on the socket.
 */
export function readGateLine(line: string): GateLine | undefined {
  const value = jsonObjectLine(line);
  if (!value) return undefined;
  const { pending, fallback, answer, refused } = value as Record<string, Record<string, unknown> | undefined>;
  if (refused && isString(refused['code']) && isString(refused['message']))
    return { refused: { code: shown(refused['code']), message: shown(refused['message']) } };
  if (pending && isString(pending['requestId']) && isTime(pending['exp']))
    return { pending: { requestId: pending['requestId'], exp: pending['exp'] } };
  if (
    fallback &&
    isString(fallback['requestId']) &&
    (fallback['method'] === 'totp' || fallback['method'] === 'challenge') &&
    isString(fallback['reason']) &&
    isString(fallback['prompt']) &&
    isTime(fallback['exp'])
  )
    return {
      fallback: {
        requestId: fallback['requestId'],
        method: fallback['method'],
        reason: shown(fallback['reason']),
        prompt: shown(fallback['prompt'], true),
        exp: fallback['exp'],
      },
    };
  if (!answer || !isString(answer['reason'])) return undefined;
  const requestId = isString(answer['requestId']) ? { requestId: answer['requestId'] } : {};
  const reason = shown(answer['reason']);
  switch (answer['decision']) {
    case 'allow':
      return ALLOWED_VIA.includes(answer['via'] as AllowedVia)
        ? { answer: { decision: 'allow', reason, via: answer['via'] as AllowedVia, ...requestId } }
        : undefined;
    case 'deny':
      return isString(answer['blockReason'])
        ? {
            answer: {
              decision: 'deny',
              reason,
              blockReason: answer['blockReason'] as BlockReason,
              ...requestId,
            },
          }
        : undefined;
    case 'defer':
      return { answer: { decision: 'defer', reason } };
    default:
      return undefined;
  }
}

/** The gate request: an agent's call with its command and input, whole (the policy matches it whole). */
export const MAX_REQUEST_LINE_BYTES = 1024 * 1024;

/**
 * Caps on what an agent sends. Text shown as sent takes the wire's caps; what is judged is
 * refused beyond its cap (a longer path cannot be opened, no tool has more paths), and the
 * gatekeeper cuts what it shows.
 */
const MAX = {
  name: LIMITS.nameBytes,
  title: LIMITS.titleBytes,
  detail: LIMITS.detailBytes,
  target: LIMITS.targetBytes,
  tool: 128,
  path: PATH_MAX,
  paths: 32,
  diff: MOST_DIFF_BYTES,
  id: 256,
};

const TEXT_MEMBERS = [
  'agent',
  'command',
  'cwd',
  'agentConfigDir',
  'title',
  'detail',
  'diff',
  'target',
  'session',
  'toolUseId',
] as const;
const FLAG_MEMBERS = ['interactive', 'canDefer', 'unsandboxed'] as const;

/**
 * Why a member the daemon knows is of the wrong type, if one is: refused, never dropped, so a
 * caller's mistake (`paths` as a string, a risk misspelt) is told, not judged as something else.
 * A null member counts as absent.
 */
function wrongType(raw: Record<string, unknown>): string | undefined {
  const given = (key: string) => raw[key] !== undefined && raw[key] !== null;
  const text = TEXT_MEMBERS.find((key) => given(key) && typeof raw[key] !== 'string');
  if (text) return `${text} must be a string`;
  const flag = FLAG_MEMBERS.find((key) => given(key) && typeof raw[key] !== 'boolean');
  if (flag) return `${flag} must be true or false`;
  const paths = raw['paths'];
  if (given('paths') && !(Array.isArray(paths) && paths.every((path) => typeof path === 'string')))
    return 'paths must be a list of strings';
  if (given('risk') && !RISK_LEVELS.includes(raw['risk'] as RiskLevel))
    return `risk must be one of ${RISK_LEVELS.join(', ')}`;
  const timeout = raw['timeoutSeconds'];
  if (given('timeoutSeconds') && !(Number.isSafeInteger(timeout) && (timeout as number) > 0))
    return 'timeoutSeconds must be a whole number of seconds above 0';
  return undefined;
}

/** Reads a gate request from an agent: types checked, text cleaned and capped, never trusted. */
export function readGateRequest(body: unknown): GateRequest | { error: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { error: 'the request must be a JSON object' };
  const raw = body as Record<string, unknown>;
  const typeError = wrongType(raw);
  if (typeError) return { error: typeError };
  let shortened = false;
  const text = (value: unknown, maxBytes: number, multiline = false): string | undefined => {
    if (typeof value !== 'string') return undefined;
    const cleaned = sanitizeText(value, { maxBytes, multiline });
    shortened ||= cleaned.changed;
    return cleaned.text;
  };
  // Cut, not cleaned: its hidden characters are written out for the phone (requestDetails).
  const shown = (value: unknown, maxBytes: number): string | undefined => {
    if (typeof value !== 'string') return undefined;
    const kept = cutToStartAndEnd(value, maxBytes);
    shortened ||= kept.changed;
    return kept.text;
  };
  const tool = raw['tool'];
  if (tool === undefined || tool === null || tool === '') return { error: 'tool is required' };
  if (typeof tool !== 'string') return { error: 'tool must be a string' };
  if (sanitizeText(tool, { maxBytes: MAX.tool, multiline: false }).changed)
    return {
      error: `tool must be a name of at most ${MAX.tool} bytes, without control or invisible characters`,
    };
  // Latch's own changes (a looser config, a phone added) ask as agent "latch", tool "latch.…":
  // a caller that took those names could ask first, and the daemon's request would join its own.
  const agent = text(raw['agent'], MAX.name) || 'agent';
  if (agent === RESERVED_AGENT || tool.startsWith(`${RESERVED_AGENT}.`))
    return { error: `the agent name "${RESERVED_AGENT}" and tools "${RESERVED_AGENT}.…" are Latch's own` };
  // One request per (session, tool call): a cut or cleaned id would make two calls one, and one
  // approval answer both.
  const id = (['session', 'toolUseId'] as const).find(
    (key) =>
      typeof raw[key] === 'string' && sanitizeText(raw[key], { maxBytes: MAX.id, multiline: false }).changed,
  );
  if (id) return { error: `${id} must be at most ${MAX.id} bytes, without control or invisible characters` };
  const paths = ((raw['paths'] ?? []) as string[]).filter((path) => path !== '');
  if (paths.length > MAX.paths) return { error: `a request names at most ${MAX.paths} paths` };
  const cwd = typeof raw['cwd'] === 'string' ? raw['cwd'] : undefined;
  const agentConfigDir = typeof raw['agentConfigDir'] === 'string' ? raw['agentConfigDir'] : undefined;
  if ([...paths, cwd ?? '', agentConfigDir ?? ''].some((path) => utf8Length(path) > MAX.path))
    return { error: `a path is at most ${MAX.path} bytes (PATH_MAX): a longer one cannot be opened` };
  let input: string | undefined;
  if (typeof raw['input'] === 'string') input = raw['input'];
  else if (raw['input'] !== undefined) {
    const written = toolInputText(raw['input']);
    if ('error' in written) return written;
    input = written.text;
  }
  const risk = (raw['risk'] ?? undefined) as RiskLevel | undefined;
  const timeout = (raw['timeoutSeconds'] ?? undefined) as number | undefined;
  const optional = (key: keyof GateRequest, value: string | number | undefined) =>
    value === undefined || value === '' ? {} : { [key]: value };
  const request = {
    agent,
    tool,
    paths,
    interactive: raw['interactive'] === true,
    canDefer: raw['canDefer'] === true,
    ...(raw['unsandboxed'] === true ? { unsandboxed: true } : {}),
    // The command stays exactly as sent, whole (the socket caps a request at 1 MiB): the policy
    // must judge what runs, not a cleaned or cut copy. It is cleaned and cut for display later.
    ...optional('command', typeof raw['command'] === 'string' ? raw['command'] : undefined),
    ...optional('cwd', cwd),
    ...optional('agentConfigDir', agentConfigDir?.startsWith('/') ? agentConfigDir : undefined),
    ...optional('input', input),
    ...optional('title', text(raw['title'], MAX.title)),
    ...optional('detail', text(raw['detail'], MAX.detail, true)),
    ...optional('diff', shown(raw['diff'], MAX.diff)),
    ...optional('target', text(raw['target'], MAX.target)),
    ...optional('session', typeof raw['session'] === 'string' ? raw['session'] : undefined),
    ...optional('toolUseId', typeof raw['toolUseId'] === 'string' ? raw['toolUseId'] : undefined),
    ...optional('timeoutSeconds', timeout),
    ...(risk ? { risk } : {}),
  };
  return { ...request, shortened } as GateRequest;
}

/** The status line every client can show. */
export interface DaemonStatus {
  v: 1;
  frozen: boolean;
  epoch: number;
  reason: string | null;
  relay: 'connecting' | 'connected' | 'disconnected';
  devices: number;
  /** Trusted phones whose revoke a phone not paired here asked in the app (`latch devices`). */
  revokesAsked: number;
  quorum: number;
  pending: number;
  policy: 'ok' | 'invalid' | 'loosening_pending';
  config: 'ok' | 'invalid' | 'loosening_pending';
  /**
   * Rotated audit files kept beyond `audit.keep_files` because their last line is younger than
   * `audit.keep_hours` (audit/auditRotation.ts): something wrote a lot lately. 0 within budget.
   */
  auditOverBudget: number;
}
