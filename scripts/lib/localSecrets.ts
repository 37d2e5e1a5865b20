import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import webpush from 'web-push';

/**
 * The relay's secrets for running on this machine: VAPID keys made once and kept in an env file
 * (mode 0600) that wrangler dev reads. Production keys are Worker secrets instead (docs/deploy.md).
 * Returns the public key, which is not secret.
 */
export function ensureRelayEnvFile(
  path: string,
  subject = 'mailto:latch@localhost',
): { vapidPublicKey: string; created: boolean } {
  if (existsSync(path)) {
    if ((statSync(path).mode & 0o077) !== 0) {
      chmodSync(path, 0o600);
      console.log(`tightened ${path} to mode 0600`);
    }
    const publicKey = /^VAPID_PUBLIC_KEY=(.+)$/m.exec(readFileSync(path, 'utf8'))?.[1];
    if (publicKey) return { vapidPublicKey: publicKey, created: false };
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const keys = webpush.generateVAPIDKeys();
  const lines = [
    `VAPID_PUBLIC_KEY=${keys.publicKey}`,
    `VAPID_PRIVATE_KEY=${keys.privateKey}`,
    `VAPID_SUBJECT=${subject}`,
  ];
  writeFileSync(path, `${lines.join('\n')}\n`, { mode: 0o600 });
  return { vapidPublicKey: keys.publicKey, created: true };
}
