import { existsSync, readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { validateId } from '../../shared/text/validateId.ts';
import { tomlKeyLine } from './tomlKeyLine.ts';

export interface LatchConfig {
  relay: { url: string };
  host: { name: string; fleet: string };
  approvals: {
    timeoutSeconds: number;
    /** Push-fatigue step-up: after this many phone approvals within the window, a review hold. */
    burstApprovals: number;
    burstWindowSeconds: number;
    reviewSeconds: number;
    /** How long a phone's deny marks the same request asked again. */
    askedAgainSeconds: number;
  };
  killSwitch: { quorum: number; strict: boolean; graceSeconds: number; onFreeze: 'stop' | 'terminate' };
  fallback: { mode: 'none' | 'totp' | 'challenge' };
  audit: { content: 'full' | 'none' };
}

/** Why the configuration cannot be used. Every one of these makes gated calls deny, never allow. */
export class ConfigError extends Error {
  readonly code: 'config_missing' | 'config_invalid';
  constructor(code: ConfigError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

export function configTemplate(options: {
  relayUrl: string;
  hostName: string;
  fleet: string;
  quorum: number;
}): string {
  return `# Latch configuration. Keep this file mode 0600. Reference: docs/daemon.md

[relay]
# The relay's origin: your own Worker, or http://localhost:8787 from \`npm start\`.
url = ${JSON.stringify(options.relayUrl)}

[host]
# How this machine is named on your phone.
name = ${JSON.stringify(options.hostName)}
# The fleet this host belongs to. A phone already in the fleet adds this host to it when it
# scans this host's pairing code. To join an existing fleet: latch init --fleet <id>.
fleet = ${JSON.stringify(options.fleet)}

[approvals]
# How long a request waits for a phone, in seconds. No answer in time is a deny.
timeout_seconds = 300
# Push fatigue (docs/security.md): after burst_approvals phone approvals within
# burst_window_seconds, each new request waits review_seconds before an approval counts.
burst_approvals = 5
burst_window_seconds = 600
review_seconds = 30
# A request asked again this soon after a phone denied it is marked, held, and cannot be
# approved from the notification.
asked_again_seconds = 600

[kill_switch]
# Phones needed to resume after a freeze. 1 suits a single phone; once more are paired, raise
# it here (raising takes effect at once; lowering waits for a phone's approval).
quorum = ${options.quorum}
# false: while the relay is unreachable, keep the last state. true: freeze after grace_seconds.
strict = false
grace_seconds = 120
# What \`latch exec\` does to the processes it started when the fleet freezes:
# "stop" (SIGSTOP, resumable with SIGCONT) or "terminate" (SIGTERM).
on_freeze = "stop"

[fallback]
# When no phone can be reached: "none" (deny), "totp" (a code from your authenticator app,
# typed on the terminal; enrol with latch pair --totp) or "challenge" (a question typed on the
# terminal). Both read /dev/tty, never the agent's stdin.
mode = "none"

[audit]
# "full" keeps command text in the audit log; "none" keeps only ids.
# LATCH_AUDIT_CONTENT=none overrides this.
content = "full"
`;
}

type Table = Record<string, unknown>;

/** Every setting config.toml may hold, by table. */
const SETTINGS = new Map<string, readonly string[]>([
  ['relay', ['url']],
  ['host', ['name', 'fleet']],
  [
    'approvals',
    ['timeout_seconds', 'burst_approvals', 'burst_window_seconds', 'review_seconds', 'asked_again_seconds'],
  ],
  ['kill_switch', ['quorum', 'strict', 'grace_seconds', 'on_freeze']],
  ['fallback', ['mode']],
  ['audit', ['content']],
]);

/** The first table or setting the config holds that Latch has not: a typo, whose value would be ignored. */
function unknownSetting(document: Table): string[] | undefined {
  for (const [name, value] of Object.entries(document)) {
    const known = SETTINGS.get(name);
    if (!known) return [name];
    const key = Object.keys(value as Table).find((setting) => !known.includes(setting));
    if (key !== undefined) return [name, key];
  }
  return undefined;
}

function table(value: unknown, name: string): Table {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError('config_invalid', `[${name}] must be a table`);
  return value as Table;
}

function pick<T>(
  section: Table,
  key: string,
  where: string,
  fallback: T | undefined,
  check: (value: unknown) => value is T,
  expected: string,
): T {
  const value = section[key];
  if (value === undefined) {
    if (fallback === undefined) throw new ConfigError('config_invalid', `${where}.${key} is required`);
    return fallback;
  }
  if (!check(value)) throw new ConfigError('config_invalid', `${where}.${key} must be ${expected}`);
  return value;
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
const isCount =
  (min: number, max: number) =>
  (value: unknown): value is number =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
const isOneOf =
  <T extends string>(...values: T[]) =>
  (value: unknown): value is T =>
    typeof value === 'string' && (values as string[]).includes(value);

/** Reads and checks config.toml. Throws ConfigError with a message that names the fault. */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): LatchConfig {
  if (!existsSync(path))
    throw new ConfigError('config_missing', `no configuration at ${path}; run latch init`);
  return parseConfig(readFileSync(path, 'utf8'), path, env);
}

/** Checks a config's text; `path` names it in messages. Throws ConfigError. */
export function parseConfig(text: string, path: string, env: NodeJS.ProcessEnv = process.env): LatchConfig {
  let document: Table;
  try {
    document = parseToml(text) as Table;
  } catch (error) {
    throw new ConfigError(
      'config_invalid',
      `${path} is not valid TOML: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  const relay = table(document['relay'], 'relay');
  const host = table(document['host'], 'host');
  const approvals = table(document['approvals'], 'approvals');
  const killSwitch = table(document['kill_switch'], 'kill_switch');
  const fallback = table(document['fallback'], 'fallback');
  const audit = table(document['audit'], 'audit');
  // A misspelt key would leave its setting at the default, silently: refused, with its line.
  const unknown = unknownSetting(document);
  if (unknown) {
    const line = tomlKeyLine(text, unknown);
    throw new ConfigError(
      'config_invalid',
      `${path}${line ? ` line ${line}` : ''}: unknown setting "${unknown.join('.')}"`,
    );
  }

  const url = pick(relay, 'url', 'relay', undefined, isString, 'a URL');
  let origin: string;
  try {
    const parsed = new URL(url);
    const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname);
    if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopback)) throw new Error('scheme');
    origin = parsed.origin;
  } catch {
    throw new ConfigError('config_invalid', 'relay.url must be an https URL (http only for localhost)');
  }
  const fleet = pick(host, 'fleet', 'host', undefined, isString, 'an id');
  if (!validateId(fleet).ok) throw new ConfigError('config_invalid', 'host.fleet is not a valid id');

  const contentOverride = env['LATCH_AUDIT_CONTENT'];
  return {
    relay: { url: origin },
    host: { name: pick(host, 'name', 'host', 'latch host', isString, 'a string'), fleet },
    approvals: {
      timeoutSeconds: pick(
        approvals,
        'timeout_seconds',
        'approvals',
        300,
        isCount(5, 86_400),
        'whole seconds from 5 to 86400',
      ),
      burstApprovals: pick(
        approvals,
        'burst_approvals',
        'approvals',
        5,
        isCount(1, 1000),
        'a whole number from 1 to 1000',
      ),
      burstWindowSeconds: pick(
        approvals,
        'burst_window_seconds',
        'approvals',
        600,
        isCount(1, 86_400),
        'whole seconds from 1 to 86400',
      ),
      reviewSeconds: pick(
        approvals,
        'review_seconds',
        'approvals',
        30,
        isCount(1, 3600),
        'whole seconds from 1 to 3600',
      ),
      askedAgainSeconds: pick(
        approvals,
        'asked_again_seconds',
        'approvals',
        600,
        isCount(0, 86_400),
        'whole seconds from 0 to 86400',
      ),
    },
    killSwitch: {
      // `latch init` writes 1; a config that leaves it out keeps the 2 it always meant, so an
      // upgrade loosens nothing.
      quorum: pick(killSwitch, 'quorum', 'kill_switch', 2, isCount(1, 32), 'a whole number from 1 to 32'),
      strict: pick(killSwitch, 'strict', 'kill_switch', false, isBoolean, 'true or false'),
      graceSeconds: pick(
        killSwitch,
        'grace_seconds',
        'kill_switch',
        120,
        isCount(0, 86_400),
        'whole seconds',
      ),
      onFreeze: pick(
        killSwitch,
        'on_freeze',
        'kill_switch',
        'stop',
        isOneOf('stop', 'terminate'),
        '"stop" or "terminate"',
      ),
    },
    fallback: {
      mode: pick(
        fallback,
        'mode',
        'fallback',
        'none',
        isOneOf('none', 'totp', 'challenge'),
        '"none", "totp" or "challenge"',
      ),
    },
    audit: {
      content:
        contentOverride === 'none'
          ? 'none'
          : pick(audit, 'content', 'audit', 'full', isOneOf('full', 'none'), '"full" or "none"'),
    },
  };
}
