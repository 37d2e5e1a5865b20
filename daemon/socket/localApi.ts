import { RISK_LEVELS, type RiskLevel } from '../../shared/messages/common.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';

/**
 * The daemon's local API, spoken over its Unix socket by hooks, `latch request`, `latch exec`,
 * the SDK and the MCP gate. Callers are agents: every string is cleaned here, every size capped.
 */
export interface GateRequest {
  /** Which agent asks, e.g. "claude-code". */
  agent: string;
  tool: string;
  command?: string;
  paths: string[];
  cwd?: string;
  /** The tool's input as JSON text, shown when there is no command. */
  input?: string;
  title?: string;
  detail?: string;
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
  // Said by clients, when the daemon itself cannot be trusted or reached:
  | 'daemon_unreachable'
  | 'insecure_socket_path'
  | 'config_missing';

export type GateAnswer =
  | { decision: 'allow'; reason: string; via: 'policy' | 'phone' | 'totp' | 'challenge'; requestId?: string }
  | { decision: 'deny'; reason: string; blockReason: BlockReason; requestId?: string }
  | { decision: 'defer'; reason: string }
  | { decision: 'fallback'; reason: string; requestId: string; method: 'totp' | 'challenge'; prompt: string };

const MAX = {
  name: 64,
  tool: 128,
  command: 8000,
  path: 1024,
  paths: 32,
  input: 16_000,
  title: 200,
  detail: 4000,
  id: 256,
};

/** Reads a gate request from an agent, leniently (clean and cap, never trust) but completely. */
export function readGateRequest(body: unknown): GateRequest | { error: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { error: 'the request must be a JSON object' };
  const raw = body as Record<string, unknown>;
  let shortened = false;
  const text = (value: unknown, maxBytes: number, multiline = false): string | undefined => {
    if (typeof value !== 'string') return undefined;
    const cleaned = sanitizeText(value, { maxBytes, multiline });
    shortened ||= cleaned.changed;
    return cleaned.text;
  };
  const tool = text(raw['tool'], MAX.tool);
  if (!tool) return { error: 'tool is required' };
  const paths = Array.isArray(raw['paths'])
    ? raw['paths']
        .slice(0, MAX.paths)
        .map((path) => text(path, MAX.path))
        .filter((path): path is string => !!path)
    : [];
  const risk = RISK_LEVELS.includes(raw['risk'] as RiskLevel) ? (raw['risk'] as RiskLevel) : undefined;
  const timeout =
    typeof raw['timeoutSeconds'] === 'number' &&
    Number.isInteger(raw['timeoutSeconds']) &&
    raw['timeoutSeconds'] > 0
      ? raw['timeoutSeconds']
      : undefined;
  const optional = (key: keyof GateRequest, value: string | number | undefined) =>
    value === undefined || value === '' ? {} : { [key]: value };
  const request = {
    agent: text(raw['agent'], MAX.name) || 'agent',
    tool,
    paths,
    interactive: raw['interactive'] === true,
    canDefer: raw['canDefer'] === true,
    ...optional('command', text(raw['command'], MAX.command, true)),
    ...optional('cwd', text(raw['cwd'], MAX.path)),
    ...optional(
      'input',
      typeof raw['input'] === 'string'
        ? text(raw['input'], MAX.input, true)
        : raw['input'] !== undefined
          ? text(JSON.stringify(raw['input'], null, 2), MAX.input, true)
          : undefined,
    ),
    ...optional('title', text(raw['title'], MAX.title)),
    ...optional('detail', text(raw['detail'], MAX.detail, true)),
    ...optional('target', text(raw['target'], MAX.title)),
    ...optional('session', text(raw['session'], MAX.id)),
    ...optional('toolUseId', text(raw['toolUseId'], MAX.id)),
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
  quorum: number;
  pending: number;
  policy: 'ok' | 'invalid' | 'loosening_pending';
}
