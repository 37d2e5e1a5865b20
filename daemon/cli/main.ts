import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { hostname } from 'node:os';
import { RISK_LEVELS } from '../../shared/messages/common.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { AGENTS } from '../install/agents.ts';
import type { Shell } from './commands/completion.ts';
import { USAGE_EXIT } from './exitCodes.ts';
import { latchPackage } from './latchPackage.ts';
import { parseWholeNumber, type WholeNumberRange } from './wholeNumber.ts';

/**
 * The `latch` command line: every command, its options and help, in one place. Each command's
 * code is loaded only when it runs, so that `latch hook claude-code`, which an agent waits on
 * for every tool call, does not load pairing, QR codes or WebAuthn registration.
 */
type Runner = { run: (...args: never[]) => Promise<void> };
const lazy =
  (load: () => Promise<Runner>) =>
  async (...args: unknown[]) =>
    ((await load()).run as (...args: unknown[]) => Promise<void>)(...args.slice(0, -1));

/** A numeric option's parser: a bad value is a usage error that names the option. */
const wholeNumber =
  (range: WholeNumberRange) =>
  (text: string): number => {
    const value = parseWholeNumber(text, range);
    if (typeof value !== 'number') throw new InvalidArgumentError(`It ${value.error}.`);
    return value;
  };

const SECONDS = 'whole seconds';
const SHELLS: readonly Shell[] = ['bash', 'zsh', 'fish'];

const riskOption = () =>
  new Option('--risk <level>', 'your own estimate; the stricter of it and the policy’s counts').choices(
    RISK_LEVELS,
  );
const jsonOption = ['--json', 'print one JSON object (docs/daemon.md#for-scripts); same exit codes'] as const;

export function buildProgram(): Command {
  const program = new Command('latch')
    .description('Hold AI agents’ dangerous actions until you approve them on your phone.')
    .version(`latch ${latchPackage().version} (protocol v${PROTOCOL_VERSION})`, '-V, --version')
    // `-V` only before a command: after it, `--title -V` (a value an agent may supply) printed the
    // version and exited 0, which a script reads as approved, without asking anyone.
    .enablePositionalOptions()
    .showHelpAfterError()
    // Set before any subcommand, which inherits both. Commander exits 1 on a usage error, which
    // a script cannot tell from "denied": every usage error exits USAGE_EXIT, as Latch's own do.
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : USAGE_EXIT))
    .configureOutput({ outputError: (text, write) => write(`latch: ${text.replace(/^error: /, '')}`) });

  program
    .command('init')
    .description('write a commented config (0600), the default policy, and this host’s identity key')
    .option('--relay <url>', 'the relay’s origin', 'http://localhost:8787')
    .option('--name <name>', 'how this host is named on your phone', hostname())
    .option('--fleet <id>', 'join an existing fleet (its id, from `latch hosts` on another host)')
    .option(
      '--quorum <n>',
      'phones needed to resume after a freeze; raise it once more phones are paired',
      wholeNumber({ min: 1, max: LIMITS.devicesPerFleet, unit: 'a whole number' }),
      1,
    )
    .option(
      '--reset',
      'start over when the state was lost or replaced: keep the old aside, take Latch’s defaults as approved, pair again',
    )
    .action(lazy(() => import('./commands/init.ts')));

  program
    .command('pair')
    .description('pair a phone: show a QR code, wait for the phone, compare the short code, store its keys')
    .option('--totp', 'also enrol a TOTP fallback for when no phone can be reached')
    .option(
      '--timeout <seconds>',
      'how long the code stays valid',
      wholeNumber({ min: 60, max: 3600, unit: SECONDS }),
      600,
    )
    .action(lazy(() => import('./commands/pair.ts')));

  program
    .command('daemon')
    .description('run the daemon in the foreground (see docs/daemon.md for a systemd user unit)')
    .action(lazy(() => import('./commands/daemon.ts')));

  program
    .command('status')
    .description(
      'one line; exits 0 when running and not frozen, 1 when frozen, 2 when the daemon cannot be reached',
    )
    .option(...jsonOption)
    .action(lazy(() => import('./commands/status.ts')));

  program
    .command('panic')
    .argument('[reason...]', 'why, shown on every phone', ['latch panic'])
    .description('freeze every agent of the fleet, from this terminal')
    .action(lazy(() => import('./commands/panic.ts')));

  program
    .command('devices')
    .description('list the phones paired with this host')
    .option('--revoke <id>', 'stop trusting a phone on this host')
    .option('--keep <id>', 'keep trusting a phone whose revoke a phone not paired here asked')
    .option(...jsonOption)
    .action(lazy(() => import('./commands/devices.ts')));

  program
    .command('hosts')
    .description('show this host and its fleet, and how to add another host')
    .option(...jsonOption)
    .action(lazy(() => import('./commands/hosts.ts')));

  program
    .command('doctor')
    .description(
      'check socket privacy, file modes, the relay, paired phones, the quorum and the agents’ hooks, with fixes',
    )
    .option(...jsonOption)
    .action(lazy(() => import('./commands/doctor.ts')));

  program
    .command('install')
    .description(
      'write Latch’s hooks into the agent’s settings: absolute paths, and a timeout that covers the longest wait',
    )
    .addArgument(new Argument('<agent>', 'claude-code or codex').choices(AGENTS))
    .option('--project', 'the current directory’s project settings instead of yours')
    .action(lazy(() => import('./commands/install.ts')));

  program
    .command('uninstall')
    .description('take Latch’s hooks, and only them, out of the agent’s settings')
    .addArgument(new Argument('<agent>', 'claude-code or codex').choices(AGENTS))
    .option('--project', 'the current directory’s project settings instead of yours')
    .action(lazy(() => import('./commands/uninstall.ts')));

  const policy = program.command('policy').description('the rules phones allowed with an approval');
  policy
    .command('grants')
    .description('list the rules allowed from a phone (“calls like this”) still in force')
    .option(...jsonOption)
    .action(lazy(() => import('./commands/policyGrants.ts')));
  policy
    .command('revoke')
    .description('revoke one rule allowed from a phone, or all of them (no phone needed: it tightens)')
    .argument('[id]', 'the rule’s id, from latch policy grants')
    .option('--all', 'every rule in force')
    .option(...jsonOption)
    .action(async (id: string | undefined, options: { all?: boolean; json?: boolean }) =>
      (await import('./commands/policyGrants.ts')).revoke(id, options),
    );

  program
    .command('audit')
    .description('the audit log')
    .command('verify')
    .description('check that no line of the audit log was edited, deleted, reordered or cut')
    .option(...jsonOption)
    .action(lazy(() => import('./commands/audit.ts')));

  program
    .command('request')
    .description(
      'the generic gate: ask (policy, then your phone); exit 0 approved, 1 denied, 2 usage error, 3 Latch unavailable',
    )
    .requiredOption('--title <title>', 'what is asked, in a line')
    .option('--detail <text>', 'the details (the command, the diff, …)')
    .addOption(riskOption())
    .option('--target <name>', 'what a person types to approve a critical request')
    .option('--tool <name>', 'the tool name the policy matches', 'request')
    .option(
      '--timeout <seconds>',
      'how long to wait for a phone',
      wholeNumber({ min: 1, max: 86_400, unit: SECONDS }),
    )
    .option(...jsonOption)
    .action(lazy(() => import('./commands/request.ts')));

  program
    .command('exec')
    .description(
      'ask first, then run the command; on a freeze, stop what it started; exit 77 when it did not run',
    )
    .addOption(riskOption())
    .option('--title <title>', 'what the phone shows as the title')
    .argument('<command...>', 'the command and its arguments, after --')
    .action(lazy(() => import('./commands/exec.ts')));

  // Listed for help only: daemon/bin/latch.cjs runs these on the hook's own bundle, which reads
  // its `--timeout` itself.
  const hook = program
    .command('hook')
    .description('answer an agent’s hook (written into its settings by latch install)');
  for (const [agent, what] of [
    ['claude-code', 'read Claude Code’s PreToolUse or PermissionRequest JSON on stdin, print its answer'],
    ['codex', 'the same for Codex, whose hooks speak Claude Code’s JSON'],
  ] as const) {
    hook
      .command(agent)
      .description(what)
      .option('--timeout <seconds>', 'the agent’s timeout for this hook: it answers deny before it', '600');
  }

  program
    .command('mcp')
    .description('run an MCP server behind Latch: every tools/call waits for the policy or a phone')
    .option(
      '--name <name>',
      'the server’s name in tool names (mcp__<name>__<tool>); default: the command’s name',
    )
    .argument('<command...>', 'the server’s command and its arguments, after --')
    .action(lazy(() => import('./commands/mcp.ts')));

  program
    .command('relay')
    .description('your own relay')
    .command('deploy')
    .description(
      'deploy your own relay and phone app to Cloudflare with wrangler; VAPID keys made once, kept 0600, sent as Worker secrets',
    )
    .option(
      '--subject <contact>',
      'how push services reach you: mailto:you@your.domain or an https: URL; needed the first time',
    )
    .option('--name <worker>', 'the Worker’s name (default latch-relay); it is in the relay’s address')
    .option(
      '--wrangler <path>',
      'the wrangler to run (or $LATCH_WRANGLER); default: npx, the version Latch is tested with',
    )
    .option('--dry-run', 'bundle and check everything, deploy nothing: no Cloudflare account needed')
    .action(lazy(() => import('./commands/relayDeploy.ts')));

  program
    .command('completion')
    .description('print a completion script for every command and option: source <(latch completion bash)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    // Not lazy(): the script is made from this very program, which it is given.
    .action(async (shell: Shell) => (await import('./commands/completion.ts')).run(shell, program));

  return program;
}

await buildProgram().parseAsync(process.argv);
