import { existsSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { LIMITS } from '../../shared/messages/limits.ts';
import { validateId } from '../../shared/text/validateId.ts';
import { AUDIT_ROTATION_DEFAULTS } from '../audit/auditRotation.ts';
import { LastingFault } from '../lastingFault.ts';
import { tomlKeyLine } from './tomlKeyLine.ts';
import { readRegularFile } from './readRegularFile.ts';

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
  audit: {
    content: 'full' | 'none';
    /** audit.log is rotated before it would grow past this many bytes (audit/auditRotation.ts). */
    rotateBytes: number;
    /** How many rotated audit files are kept; the oldest beyond them are deleted. */
    keepFiles: number;
    /** A rotated file whose last line is younger than this is kept, beyond keepFiles too. */
    keepHours: number;
  };
  /**
   * How long settled requests and other finished records are kept in state.db, and how many
   * settled requests at most (state/requestStore.capSettled).
   */
  retention: { requestsDays: number; maxRequests: number };
}

/** Why the configuration cannot be used. Every one of these makes gated calls deny, never allow. */
export class ConfigError extends LastingFault {
  readonly code: 'config_missing' | 'config_invalid';
  constructor(code: ConfigError['code'], message: string) {
    super(message);
    this.code = code;
  }
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
  ['audit', ['content', 'rotate_bytes', 'keep_files', 'keep_hours']],
  ['retention', ['requests_days', 'max_requests']],
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
const isBetween =
  (min: number, max: number) =>
  (value: unknown): value is number =>
    typeof value === 'number' && value >= min && value <= max;
const isOneOf =
  <T extends string>(...values: T[]) =>
  (value: unknown): value is T =>
    typeof value === 'string' && (values as string[]).includes(value);

/** Reads and checks config.toml. Throws ConfigError with a message that names the fault. */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): LatchConfig {
  if (!existsSync(path))
    throw new ConfigError('config_missing', `no configuration at ${path}; run latch init`);
  const read = readRegularFile(path);
  if (!read.ok) throw new ConfigError('config_invalid', read.message);
  return parseConfig(read.text, path, env);
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
  const retention = table(document['retention'], 'retention');
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
      // upgrade loosens nothing. Up to 32 was once taken: such a config (and the copy a phone
      // approved) still opens, its quorum counted as all of a fleet's phones, since more could
      // never vote.
      quorum: Math.min(
        pick(
          killSwitch,
          'quorum',
          'kill_switch',
          2,
          isCount(1, LIMITS.votesPerFreeze),
          `a whole number from 1 to ${LIMITS.devicesPerFleet}`,
        ),
        LIMITS.devicesPerFleet,
      ),
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
      rotateBytes: pick(
        audit,
        'rotate_bytes',
        'audit',
        AUDIT_ROTATION_DEFAULTS.rotateBytes,
        // 256 MiB: `latch audit verify` reads a file whole, and Node's longest string is 512 MiB.
        isCount(1024, 256 * 1024 ** 2),
        'a whole number of bytes from 1024 to 268435456',
      ),
      keepFiles: pick(
        audit,
        'keep_files',
        'audit',
        AUDIT_ROTATION_DEFAULTS.keepFiles,
        isCount(0, 1000),
        'a whole number from 0 to 1000',
      ),
      keepHours: pick(
        audit,
        'keep_hours',
        'audit',
        AUDIT_ROTATION_DEFAULTS.keepHours,
        isBetween(0, 8760),
        'a number of hours from 0 to 8760',
      ),
    },
    retention: {
      requestsDays: pick(
        retention,
        'requests_days',
        'retention',
        30,
        isBetween(0.001, 36_500),
        'a number of days from 0.001 to 36500',
      ),
      maxRequests: pick(
        retention,
        'max_requests',
        'retention',
        10_000,
        isCount(100, 10_000_000),
        'a whole number from 100 to 10000000',
      ),
    },
  };
}
