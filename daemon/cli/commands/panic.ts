import { signEnvelope } from '../../../shared/envelopes/signEnvelope.ts';
import { existsSync, readFileSync } from 'node:fs';
import { loadHostIdentity } from '../../identity/hostIdentity.ts';
import { KillSwitch } from '../../kill-switch/killSwitch.ts';
import { RelayClient } from '../../relay/relayClient.ts';
import { callDaemon } from '../../socket/daemonClient.ts';
import { openHome } from '../home.ts';

export async function run(words: string[]): Promise<void> {
  const reason = words.join(' ').slice(0, 200) || 'latch panic';
  try {
    const status = await callDaemon<{ relayed: boolean; relayError?: string }>(
      'POST',
      '/v1/panic',
      { reason },
      { timeoutMs: 15_000 },
    );
    process.stdout.write(
      status.relayed
        ? 'frozen: the fleet is frozen\n'
        : `frozen: this host is frozen; the relay was not reached (${status.relayError})\n`,
    );
    return;
  } catch {
    // No daemon: freeze this host's state and tell the relay directly.
  }
  const { files, config, store, audit } = openHome();
  const host = await loadHostIdentity(files.hostKey);
  const relying = { origins: [config.relay.url], rpId: new URL(config.relay.url).hostname };
  new KillSwitch({
    store,
    audit,
    host,
    fleet: config.host.fleet,
    quorum: config.killSwitch.quorum,
    relying,
  }).freeze(reason, 'panic');
  audit.append({ event: 'freeze', cause: 'panic', reason, via: 'cli' });
  const token = existsSync(files.hostToken) ? readFileSync(files.hostToken, 'utf8').trim() : undefined;
  const envelope = await signEnvelope(
    'freeze',
    { fleet: config.host.fleet, reason },
    { role: 'host', id: host.id },
    host.privateKey,
  );
  const sent = await new RelayClient(config.relay.url, config.host.fleet, () => token).freeze(envelope);
  process.stdout.write(
    sent.ok
      ? 'frozen: the fleet is frozen (the daemon is not running)\n'
      : `frozen: this host is frozen; the relay was not reached (${sent.failure.message})\n`,
  );
}
