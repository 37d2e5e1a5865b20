import { existsSync, readFileSync } from 'node:fs';
import { loadHostIdentity } from '../../identity/hostIdentity.ts';
import { KillSwitch } from '../../kill-switch/killSwitch.ts';
import { panic, type PanicOutcome } from '../../kill-switch/panic.ts';
import { RelayClient } from '../../relay/relayClient.ts';
import { callDaemon } from '../../socket/daemonClient.ts';
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
    `frozen: this host is frozen, but the fleet was not told: the relay was not reached (${outcome.error}). ` +
      `${whoTellsLater}\n`,
  );
  process.exit(PANIC_EXIT.notTold);
}

export async function run(words: string[]): Promise<void> {
  const reason = words.join(' ');
  let outcome: PanicOutcome | undefined;
  try {
    outcome = await callDaemon<PanicOutcome>('POST', '/v1/panic', { reason }, { timeoutMs: 15_000 });
  } catch {
    // No daemon: the same panic, from here.
  }
  if (outcome) report(outcome, 'The daemon tells it as soon as the relay answers again.');

  const { files, config, store, audit } = openHome();
  const host = await loadHostIdentity(files.hostKey);
  const relying = { origins: [config.relay.url], rpId: new URL(config.relay.url).hostname };
  const killSwitch = new KillSwitch({
    store,
    audit,
    host,
    fleet: config.host.fleet,
    quorum: () => config.killSwitch.quorum,
    relying,
  });
  const token = existsSync(files.hostToken) ? readFileSync(files.hostToken, 'utf8').trim() : undefined;
  const relay = new RelayClient(config.relay.url, config.host.fleet, () => token);
  report(
    await panic({ killSwitch, relay, store, audit, host, fleet: config.host.fleet }, reason, 'cli'),
    'The daemon tells it once it runs and reaches the relay.',
    'the fleet is frozen (the daemon is not running)',
  );
}
