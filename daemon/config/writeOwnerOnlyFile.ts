import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Writes one of Latch's secret files: mode 0600 from its first byte (a new file, whatever the
 * umask), then renamed into place. Whatever stood at the path, a link included, is replaced, never
 * written through: a link there would otherwise carry the secret to its target, with the target's mode.
 */
export function writeOwnerOnlyFile(path: string, text: string): void {
  const next = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(next, text, { mode: 0o600, flag: 'wx' });
    renameSync(next, path);
  } catch (error) {
    rmSync(next, { force: true });
    throw error;
  }
}
