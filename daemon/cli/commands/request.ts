import { RISK_LEVELS, type RiskLevel } from '../../../shared/messages/common.ts';
import { askDaemon } from '../askDaemon.ts';
import { fail } from '../home.ts';

export function parseRisk(value: string | undefined): RiskLevel | undefined {
  if (value === undefined) return undefined;
  if (!(RISK_LEVELS as readonly string[]).includes(value))
    fail(`--risk must be one of ${RISK_LEVELS.join(', ')}`);
  return value as RiskLevel;
}

export async function run(options: {
  title: string;
  detail?: string;
  risk?: string;
  target?: string;
  tool: string;
  timeout?: string;
}): Promise<void> {
  const risk = parseRisk(options.risk);
  const answer = await askDaemon({
    agent: 'latch request',
    tool: options.tool,
    title: options.title,
    ...(options.detail !== undefined ? { detail: options.detail, command: options.detail } : {}),
    ...(risk ? { risk } : {}),
    ...(options.target ? { target: options.target } : {}),
    ...(options.timeout ? { timeoutSeconds: Number(options.timeout) } : {}),
    cwd: process.cwd(),
  });
  if (answer.decision === 'allow') {
    process.stdout.write(`approved: ${answer.reason}\n`);
    process.exit(0);
  }
  process.stdout.write(`denied: ${answer.reason}\n`);
  process.exit(1);
}
