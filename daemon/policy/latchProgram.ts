import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { latchScriptPath } from '../install/hookCommand.ts';

/**
 * The packages `latch daemon` loads from node_modules, each required by the one before it:
 * better-sqlite3 (on Node 20) and what it loads its addon with. A test holds this list to what
 * the daemon's bundle loads.
 */
export const DAEMON_PACKAGES = ['better-sqlite3', 'bindings', 'file-uri-to-path'] as const;

/**
 * What runs as Latch: the node binary and the `latch.cjs` the hook command names, the bundles it
 * loads, and the packages the daemon loads, with every folder Node looks in for one before the
 * folder it is found in (`dist/node_modules/better-sqlite3` would come first). Rewritten or
 * planted, any of them runs in the hook's place on the agent's next tool call, or as the daemon,
 * with its keys, at its next start; a user's Node and global packages (nvm, a user prefix) are
 * the user's to write, so the agent's too.
 */
export function latchProgram(): string[] {
  const script = latchScriptPath();
  const bundles = join(dirname(script), '..', '..', 'dist', 'latch');
  const files = [process.execPath, script, bundles];
  let requirer = join(bundles, 'daemon.cjs');
  for (const name of DAEMON_PACKAGES) {
    // Node takes the first of these folders that holds the package.
    const searched = (createRequire(requirer).resolve.paths(name) ?? []).map((path) => join(path, name));
    const found = searched.findIndex((folder) => existsSync(join(folder, 'package.json')));
    if (found < 0) break; // not installed (Node 22 and later use their own SQLite): nothing of it runs
    files.push(...searched.slice(0, found + 1));
    requirer = join(searched[found]!, 'package.json');
  }
  return files;
}
