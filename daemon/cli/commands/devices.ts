import { openHome } from '../home.ts';

export async function run(options: { revoke?: string }): Promise<void> {
  const { store, audit } = openHome();
  if (options.revoke) {
    if (!store.revokeDevice(options.revoke, Date.now())) {
      process.stderr.write(`latch: no paired phone has the id ${options.revoke}\n`);
      process.exit(1);
    }
    audit.append({ event: 'device_revoked', device: options.revoke });
    process.stdout.write(`revoked ${options.revoke} on this host (revoke it in the app too)\n`);
    return;
  }
  const devices = store.devices({ includeRevoked: true });
  if (devices.length === 0) process.stdout.write('no phone is paired; run latch pair\n');
  for (const device of devices) {
    process.stdout.write(
      `${device.id}  ${device.name}  paired ${new Date(device.pairedAt).toISOString()}${device.revoked ? '  (revoked)' : ''}\n`,
    );
  }
}
