import type { RiskLevel } from '../../../shared/messages/common.ts';
import { EXEC_EXIT, runUnderSwitch } from '../../exec/runUnderSwitch.ts';
import { writeStderrLine } from '../../output/stderrLine.ts';
import { shellCommand } from '../../install/shellWords.ts';
import { askDaemon } from '../../socket/askDaemon.ts';
import { currentFolder } from '../../socket/currentFolder.ts';
import { guardWithLastResort } from '../lastResort.ts';

/** The exit code of `latch exec` when the command did not run: denied, or no answer. */
export const EXEC_DENIED = EXEC_EXIT.denied;

/**
 * `latch exec -- CMD…`: asks the daemon, then runs the command under the kill switch. Until the
 * answer is known every way out — a deny, the daemon dying mid-answer, an exception, a promise
 * left unsettled — says "not running" and exits EXEC_DENIED (77): a script reads 0 as "it ran".
 */
export async function run(argv: string[], options: { risk?: RiskLevel; title?: string }): Promise<void> {
  const command = shellCommand(argv);
  const notRunning = (reason: string) => writeStderrLine(`latch: not running ${command}: ${reason}`);
  const guard = guardWithLastResort({ exitCode: EXEC_DENIED, deny: notRunning });
  function deny(reason: string): never {
    guard.answered();
    notRunning(reason);
    process.exit(EXEC_DENIED);
  }

  // Node reads each argument as UTF-8, putting U+FFFD where bytes are not: the policy would judge,
  // and Latch run, other bytes than those given. Refused, not repaired, as the hook's input is.
  if (argv.some((argument) => argument.includes('\uFFFD')))
    deny('an argument is not UTF-8 (or holds U+FFFD), and would not run as given');

  const answer = await askDaemon(() => ({
    agent: 'latch exec',
    tool: 'exec',
    command,
    cwd: currentFolder(),
    ...(options.risk ? { risk: options.risk } : {}),
    ...(options.title ? { title: options.title } : {}),
  }));
  if (answer.decision !== 'allow') deny(answer.reason);
  runUnderSwitch(argv, command, { started: () => guard.answered(), notStarted: deny });
}
