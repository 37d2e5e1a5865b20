import { revokeDevice } from '../../pairing/revokeDevice.ts';
import { fail, openHome } from '../home.ts';
import { printJson } from '../printJson.ts';

/** `latch devices --json`'s one object (docs/daemon.md#for-scripts); revoked phones included. */
export interface DevicesJson {
  devices: {
    id: string;
    name: string;
    pairedAt: string;
    revoked: boolean;
    /** A revoke asked in the app by a phone not paired here: this host still trusts the phone. */
    revokeAsked?: { by: string; at: string };
  }[];
}

/** What a person reads of a revoke this host could not check (the fix: latch devices --revoke). */
export const revokeAskedText = (revokeAsked: { by: string }): string =>
  `a revoke of it was asked in the app by ${revokeAsked.by}, a phone not paired here: its rules ended, this host still trusts it`;

export async function run(options: { revoke?: string; keep?: string; json?: boolean }): Promise<void> {
  const { store, audit } = openHome();
  if (options.keep !== undefined) {
    const device = options.keep;
    if (!store.keepDespiteRevokeAsked(device))
      fail(`no paired phone with the id ${JSON.stringify(device)} has a revoke asked in the app`, 1);
    audit.append({ event: 'revoke_asked_dismissed', device });
    if (!options.json) {
      process.stdout.write(`kept ${device}: the revoke asked in the app is forgotten here\n`);
      return;
    }
  }
  // `--revoke ""` (an empty $ID in a script) is a revoke that names no phone, not a listing.
  if (options.revoke !== undefined) {
    const device = options.revoke;
    if (device === '') fail('--revoke names no phone: give its id (latch devices lists them)');
    if (!revokeDevice(store, audit, device, { by: 'host' })) {
      process.stderr.write(`latch: no paired phone has the id ${device}\n`);
      process.exit(1);
    }
    // With --json, the answer is the list, which shows the phone revoked.
    if (!options.json) {
      process.stdout.write(`revoked ${device} on this host (revoke it in the app too)\n`);
      return;
    }
  }
  const devices = store
    .devices({ includeRevoked: true })
    .map(({ id, name, pairedAt, revoked, revokeAsked }) => ({
      id,
      name,
      pairedAt: new Date(pairedAt).toISOString(),
      revoked,
      ...(revokeAsked
        ? { revokeAsked: { by: revokeAsked.by, at: new Date(revokeAsked.at).toISOString() } }
        : {}),
    }));
  if (options.json) return printJson({ devices } satisfies DevicesJson);
  if (devices.length === 0) process.stdout.write('no phone is paired; run latch pair\n');
  for (const device of devices) {
    process.stdout.write(
      `${device.id}  ${device.name}  paired ${device.pairedAt}${device.revoked ? '  (revoked)' : ''}${device.revokeAsked ? `  (${revokeAskedText(device.revokeAsked)}; to end that, latch devices --revoke ${device.id}; if you did not ask it, latch devices --keep ${device.id})` : ''}\n`,
    );
  }
}
