import type { Command } from 'commander';
import { RISK_LEVELS, type RiskLevel } from '../../../shared/messages/common.ts';
import { askDaemon } from '../askDaemon.ts';
import { fail } from '../home.ts';

export function parseRisk(value: string | undefined): RiskLevel | undefined {
  if (value === undefined) return undefined;
  if (!(RISK_LEVELS as readonly string[]).includes(value))
    fail(`--risk must be one of ${RISK_LEVELS.join(', ')}`);
  return value as RiskLevel;
}

export function registerRequest(program: Command): void {
  program
    .command('request')
    .description('the generic gate: ask (policy, then your phone); exit 0 when approved, 1 when denied')
    .requiredOption('--title <title>', 'what is asked, in a line')
    .option('--detail <text>', 'the details (the command, the diff, …)')
    .option('--risk <level>', 'low, medium, high or critical')
    .option('--target <name>', 'what a person types to approve a critical request')
    .option('--tool <name>', 'the tool name the policy matches', 'request')
    .option('--timeout <seconds>', 'how long to wait for a phone')
    .action(
      async (options: {
        title: string;
        detail?: string;
        risk?: string;
        target?: string;
        tool: string;
        timeout?: string;
      }) => {
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
      },
    );
}
