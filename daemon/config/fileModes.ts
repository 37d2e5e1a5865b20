import { chmodSync, existsSync, statSync } from 'node:fs';

/**
 * Files that hold keys, tokens or the audit trail are the user's alone. A wider mode is tightened
 * at start, with a line saying so (design.md, "Hard rules").
 */
export function tightenToOwnerOnly(paths: readonly string[], log: (line: string) => void): void {
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      chmodSync(path, 0o600);
      log(`tightened ${path} from ${mode.toString(8).padStart(4, '0')} to 0600`);
    }
  }
}
