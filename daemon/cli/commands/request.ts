import { RISK_LEVELS, type RiskLevel } from '../../../shared/messages/common.ts';
import { askDaemon } from '../askDaemon.ts';
import { isUnavailable, REQUEST_EXIT } from '../exitCodes.ts';
import { fail } from '../home.ts';
import { guardWithLastResort } from '../lastResort.ts';
import { writeSync } from 'node:fs';

export function parseRisk(value: string | undefined): RiskLevel | undefined {
  if (value === undefined) return undefined;
  if (!(RISK_LEVELS as readonly string[]).includes(value))
    fail(`--risk must be one of ${RISK_LEVELS.join(', ')}`);
  return value as RiskLevel;
}

/** Whole seconds from 1 to a day, or a usage error: `abc` or `-5` is never "the default". */
export function parseSeconds(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1 || seconds > 86_400)
    fail(`${option} must be whole seconds from 1 to 86400, not ${JSON.stringify(value)}`, REQUEST_EXIT.usage);
  return seconds;
}

/** Past `--timeout`, how long the daemon has to say the request expired. */
const GRACE_SECONDS = 10;

export async function run(options: {
  title: string;
  detail?: string;
  risk?: string;
  target?: string;
  tool: string;
  timeout?: string;
}): Promise<void> {
  const risk = parseRisk(options.risk);
  const timeoutSeconds = parseSeconds('--timeout', options.timeout);
  // A script reads exit 0 as "approved": no path may end there without an approval.
  const guard = guardWithLastResort({
    exitCode: REQUEST_EXIT.unavailable,
    deny: (reason) => writeSync(1, `unavailable: latch: ${reason}\n`),
  });
  const answer = await askDaemon(
    {
      agent: 'latch request',
      tool: options.tool,
      title: options.title,
      ...(options.detail !== undefined ? { detail: options.detail, command: options.detail } : {}),
      ...(risk ? { risk } : {}),
      ...(options.target ? { target: options.target } : {}),
      ...(timeoutSeconds ? { timeoutSeconds } : {}),
      cwd: process.cwd(),
    },
    timeoutSeconds ? { deadline: Date.now() + (timeoutSeconds + GRACE_SECONDS) * 1000 } : {},
  );
  guard.answered();
  if (answer.decision === 'allow') {
    process.stdout.write(`approved: ${answer.reason}\n`);
    process.exit(REQUEST_EXIT.approved);
  }
  const unavailable = isUnavailable(answer);
  process.stdout.write(`${unavailable ? 'unavailable' : 'denied'}: ${answer.reason}\n`);
  process.exit(unavailable ? REQUEST_EXIT.unavailable : REQUEST_EXIT.denied);
}
