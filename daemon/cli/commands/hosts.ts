import { shownHostName } from '../../config/hostName.ts';
import { loadHostIdentity } from '../../identity/hostIdentity.ts';
import { openHome } from '../home.ts';
import { printJson } from '../printJson.ts';

/** `latch hosts --json`'s one object (docs/daemon.md#for-scripts). */
export interface HostsJson {
  host: { id: string; name: string };
  fleet: string;
  relay: string;
}

export async function run(options: { json?: boolean }): Promise<void> {
  const { files, config } = openHome();
  const host = await loadHostIdentity(files.hostKey);
  if (options.json)
    return printJson({
      host: { id: host.id, name: config.host.name },
      fleet: config.host.fleet,
      relay: config.relay.url,
    } satisfies HostsJson);
  const name = shownHostName(config.host.name);
  process.stdout.write(
    `this host  ${host.id}  ${name}\nfleet      ${config.host.fleet}\nrelay      ${config.relay.url}\n` +
      `To add another host to this fleet, run there: latch init --fleet ${config.host.fleet} --relay ${config.relay.url}\n` +
      'then latch pair, and scan its code with a phone already in the fleet. The app lists every host.\n',
  );
}
