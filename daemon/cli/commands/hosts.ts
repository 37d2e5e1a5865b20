import { loadHostIdentity } from '../../identity/hostIdentity.ts';
import { openHome } from '../home.ts';

export async function run(): Promise<void> {
  const { files, config } = openHome();
  const host = await loadHostIdentity(files.hostKey);
  process.stdout.write(
    `this host  ${host.id}  ${config.host.name}\nfleet      ${config.host.fleet}\nrelay      ${config.relay.url}\n` +
      `To add another host to this fleet, run there: latch init --fleet ${config.host.fleet} --relay ${config.relay.url}\n` +
      'then latch pair, and scan its code with a phone already in the fleet. The app lists every host.\n',
  );
}
