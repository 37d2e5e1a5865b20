import { openPanicContext, panic, type PanicOutcome } from '../../kill-switch/panic.ts';
import { callDaemon } from '../../socket/daemonClient.ts';
import { DaemonBusyError } from '../../socket/daemonSocket.ts';
import { openHome } from '../home.ts';

/** Exit codes of `latch panic`: 1 when this host froze but the fleet was not told. */
export const PANIC_EXIT = { told: 0, notTold: 1 } as const;

/** Says what froze, and ends with the exit code a shell check can rely on. */
function report(outcome: PanicOutcome, whoTellsLater: string, told = 'the fleet is frozen'): never {
  if (outcome.told) {
    process.stdout.write(`frozen: ${told}\n`);
    process.exit(PANIC_EXIT.told);
  }
  process.stdout.write(
    `frozen: this host is frozen, but the fleet was not told: ${outcome.error}. ` + `${whoTellsLater}\n`,
  );
  process.exit(PANIC_EXIT.notTold);
}

export async function run(words: string[]): Promise<void> {
  const reason = words.join(' ');
  let outcome: PanicOutcome | undefined;
  let notAnswered = 'the daemon is not running';
  try {
    outcome = await callDaemon<PanicOutcome>('POST', '/v1/panic', { reason }, { timeoutMs: 15_000 });
  } catch (error) {
    // No daemon, a busy one, or one that does not answer in time: the same panic, from here.
    if (error instanceof DaemonBusyError) notAnswered = error.message;
    else if ((error as Error).message.startsWith('no answer within'))
      notAnswered = `the daemon did not answer: ${(error as Error).message}`;
  }
  if (outcome) report(outcome, 'The daemon tells it as soon as the relay answers again.');

  const { files, config, store, audit } = openHome();
  const context = await openPanicContext(files, config, { store, audit }, () => config.killSwitch.quorum);
  report(
    await panic(context, reason, 'cli'),
    'The daemon tells it once it runs and reaches the relay.',
    `the fleet is frozen (${notAnswered})`,
  );
}
