import { closeSync, constants, fchmodSync, fstatSync, openSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { rotatedFiles } from '../audit/auditFiles.ts';
import { latchFiles } from './paths.ts';

/**
 * Latch's folders and the files that hold keys, tokens or the audit trail are the user's alone.
 * A wider mode is tightened at start, with a line saying so (design.md, "Hard rules"): a file to
 * 0600, a folder to 0700. Each is opened without following a link, and only a regular file (or,
 * among `folders`, a folder) is changed: whatever else stands at a path (a link, a FIFO) is left
 * as it is, for the check that reads it to refuse.
 */
export function tightenToOwnerOnly(
  { files, folders = [] }: { files: readonly string[]; folders?: readonly string[] },
  log: (line: string) => void,
): void {
  for (const [paths, wanted] of [
    [folders, 0o700],
    [files, 0o600],
  ] as const) {
    for (const path of paths) {
      let fd: number;
      try {
        fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      } catch {
        continue; // missing, a link, or unreadable: nothing to tighten
      }
      try {
        const stat = fstatSync(fd);
        const mode = stat.mode & 0o777;
        const fits = wanted === 0o700 ? stat.isDirectory() : stat.isFile();
        if (fits && (mode & 0o077) !== 0) {
          fchmodSync(fd, wanted);
          log(
            `tightened ${path} from ${mode.toString(8).padStart(4, '0')} to ${wanted.toString(8).padStart(4, '0')}`,
          );
        }
      } finally {
        closeSync(fd);
      }
    }
  }
}

/**
 * What only its owner may read: secrets, and what an agent could learn the leash from (the audit
 * log's rotated files too, which a rename keeps at the mode they had); and the folders only they
 * may enter: the home, as the file system resolves it (a link to a folder among dotfiles), and
 * the relay's.
 */
export function ownerOnlyPlaces(home: string): { files: string[]; folders: string[] } {
  const files = latchFiles(home);
  return {
    files: [
      files.config,
      files.policy,
      files.hostKey,
      files.hostToken,
      files.totp,
      files.state,
      files.audit,
      ...rotatedAuditFiles(files.audit),
      files.relaySecrets,
    ],
    folders: [resolvedPath(home), dirname(files.relaySecrets)],
  };
}

const resolvedPath = (path: string) => {
  try {
    return realpathSync(path);
  } catch {
    return path; // not there yet
  }
};

function rotatedAuditFiles(audit: string): string[] {
  try {
    return rotatedFiles(audit).map((rotated) => rotated.path);
  } catch {
    return []; // no home yet
  }
}
