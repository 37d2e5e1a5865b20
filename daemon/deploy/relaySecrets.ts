import { lstatSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { tightenToOwnerOnly } from '../config/fileModes.ts';
import { readRegularFile } from '../config/readRegularFile.ts';
import { writeOwnerOnlyFile } from '../config/writeOwnerOnlyFile.ts';

/** The relay Worker's secrets, named as the Worker reads them (relay/env.d.ts). */
export interface RelaySecrets {
  VAPID_PUBLIC_KEY: string;
  VAPID_PRIVATE_KEY: string;
  VAPID_SUBJECT: string;
}

const NAMES = ['VAPID_PUBLIC_KEY', 'VAPID_PRIVATE_KEY', 'VAPID_SUBJECT'] as const;

/**
 * The secrets file `latch relay deploy` keeps, or undefined when there is none yet. A file that
 * others may read is tightened to 0600 first, with a line saying so (design.md, "Hard rules").
 */
export function readRelaySecrets(path: string, log: (line: string) => void): RelaySecrets | undefined {
  // A link counts as there, dangling or not, for the read to refuse.
  if (!lstatSync(path, { throwIfNoEntry: false })) return undefined;
  tightenToOwnerOnly({ files: [path] }, log);
  // Never through a link: its target's keys, with the target's mode, would be uploaded.
  const read = readRegularFile(path, { followLinks: false });
  if (!read.ok)
    throw new Error(
      `${read.message}; put the keys file itself there, or move it aside to make new VAPID keys`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.text);
  } catch {
    throw new Error(
      `${path} is not JSON; move it aside to make new VAPID keys (phones then subscribe again)`,
    );
  }
  const record = (parsed ?? {}) as Record<string, unknown>;
  for (const name of NAMES)
    if (typeof record[name] !== 'string' || record[name] === '')
      throw new Error(
        `${path} has no ${name}; move it aside to make new VAPID keys (phones then subscribe again)`,
      );
  return {
    VAPID_PUBLIC_KEY: record['VAPID_PUBLIC_KEY'],
    VAPID_PRIVATE_KEY: record['VAPID_PRIVATE_KEY'],
    VAPID_SUBJECT: record['VAPID_SUBJECT'],
  } as RelaySecrets;
}

/** Writes the secrets file: mode 0600 from its first byte, in place of the old one at once. */
export function writeRelaySecrets(path: string, secrets: RelaySecrets): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeOwnerOnlyFile(path, `${JSON.stringify(secrets, null, 2)}\n`);
}
