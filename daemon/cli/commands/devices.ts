import type { Command } from 'commander';
import { openHome } from '../home.ts';

export function registerDevices(program: Command): void {
  program
    .command('devices')
    .description('list the phones paired with this host')
    .option('--revoke <id>', 'stop trusting a phone on this host')
    .action((options: { revoke?: string }) => {
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
    });
}
