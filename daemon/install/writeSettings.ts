import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Settings } from './hookGroups.ts';

/**
 * Writes an agent's settings file whole or not at all: a temporary file beside it, then a rename,
 * so an agent starting meanwhile reads the old settings or the new, never half of them. A
 * symlinked file (a dotfiles repository) is written where it points; the file keeps its mode,
 * and a new one is 0600 in a new 0700 folder. The indentation of `previousText` is kept.
 */
export function writeSettings(path: string, settings: Settings, previousText: string | undefined): void {
  const target = previousText === undefined ? path : realpathSync(path);
  const mode = previousText === undefined ? 0o600 : statSync(target).mode & 0o777;
  const indent = /\n([ \t]+)"/.exec(previousText ?? '')?.[1] ?? 2;
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  const temporary = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fd = openSync(temporary, 'wx', mode);
    try {
      writeSync(fd, `${JSON.stringify(settings, null, indent)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // openSync's mode passes through the umask.
    chmodSync(temporary, mode);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
