import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Touch } from './pathTouches.ts';
import type { Place } from './protectedPlaces.ts';

/** How many files inside the places are compared with a file that has other names, at most. */
const MOST_FILES_INSIDE = 8192;
/** How deep inside a place its files are compared: a skill's hook script is four folders down. */
const DEEPEST_INSIDE = 5;
/**
 * Folders inside the places whose files no agent runs or reads as settings, and which grow with
 * every session (Claude Code's transcripts, backups, todos): not listed, so that the files that
 * matter fit under MOST_FILES_INSIDE and a new backup does not make the list stale.
 */
const HOLD_NO_SETTINGS = new Set([
  ...['projects', 'todos', 'file-history', 'shell-snapshots', 'statsig', 'logs', 'debug'],
  ...['sessions', 'node_modules', '.git'],
]);

/** What the file system knows a file by, whatever its path: its device and inode. */
function identity(path: string): string | undefined {
  try {
    const found = statSync(path, { throwIfNoEntry: false, bigint: true });
    return found && `${found.dev}:${found.ino}`;
  } catch {
    return undefined; // no permission to look, a name too long: nothing to compare
  }
}

/** The identity of a file with more than one name (a hard link, which no comparison of names sees). */
function multiplyNamed(path: string): string | undefined {
  try {
    const found = statSync(path, { throwIfNoEntry: false, bigint: true });
    return found?.isFile() && found.nlink > 1n ? `${found.dev}:${found.ino}` : undefined;
  } catch {
    return undefined;
  }
}

export const hasOtherNames = (path: string): boolean => multiplyNamed(path) !== undefined;

/**
 * A finder of the place a path is, or is inside, by what the file system says it is: the path
 * itself, or else the nearest of its ancestors that is one. A bind mount of Latch's home, of the
 * home folder above it, or a hard link to a secret, is another name for the same file, which no
 * comparison of names sees. A file with other names is also compared with the files inside the
 * places (a hard link to `~/.latch/policy.toml`). The places are looked at once, for every path
 * asked after.
 */
export function placeByIdentity(places: readonly Place[]): (path: string) => Touch | undefined {
  const known = new Map<string, Place>();
  for (const place of places) {
    const id = place.path === undefined ? undefined : identity(place.path);
    if (id !== undefined && !known.has(id)) known.set(id, place);
  }
  let inside: Map<string, Place> | undefined;
  return (path) => {
    for (let current = path, depth = 0; ; depth++) {
      const id = identity(current);
      const place = id === undefined ? undefined : known.get(id);
      if (place) return { place, relation: depth === 0 ? 'at' : 'inside' };
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
    const file = multiplyNamed(path);
    // Looked at once for all of a call's paths: checking the list is still fresh takes a look
    // at each folder listed.
    const place = file === undefined ? undefined : (inside ??= filesInside(places)).get(file);
    return place && { place, relation: 'inside' };
  };
}

/** The files inside the places, as last listed, and when each folder listed last changed. */
let filesInsideKnown: { places: string; folders: Map<string, string>; files: Map<string, Place> } | undefined;

/**
 * The files inside the places that are folders, by identity, nearest first, up to
 * MOST_FILES_INSIDE; not a process's folder in /proc, whose files are not files. Listed again
 * only when a folder listed has changed since (a file made, moved in or taken out changes its
 * folder): a project whose files are all hard links (pnpm's) would list them on every call.
 */
function filesInside(places: readonly Place[]): Map<string, Place> {
  const folders = places.flatMap((place) =>
    place.path === undefined || place.path.startsWith('/proc/') ? [] : [{ folder: place.path, place }],
  );
  const key = folders.map(({ folder }) => folder).join('\n');
  const known = filesInsideKnown;
  if (known?.places === key && [...known.folders].every(([folder, stamp]) => changeStamp(folder) === stamp))
    return known.files;
  // Folders of programs last: as root they are the system's (`/usr/bin`), and their thousands of
  // files must not crowd out the deeper ones of Latch's and the agents' folders.
  const programs = folders.filter(({ place }) => place.kind === 'program-folder');
  const listing = listed(folders.filter(({ place }) => place.kind !== 'program-folder'));
  listed(programs, listing);
  filesInsideKnown = { places: key, ...listing };
  return filesInsideKnown.files;
}

/**
 * When a folder last changed (an entry made, or moved in or out), as its modification and change
 * times; none if it is not there.
 */
function changeStamp(folder: string): string {
  try {
    const found = statSync(folder, { throwIfNoEntry: false, bigint: true });
    return found ? `${found.mtimeNs}:${found.ctimeNs}` : 'none';
  } catch {
    return 'none';
  }
}

/** Adds the files inside `places`, nearest first, to `listing` until it holds MOST_FILES_INSIDE. */
function listed(
  places: { folder: string; place: Place }[],
  listing = { folders: new Map<string, string>(), files: new Map<string, Place>() },
): { folders: Map<string, string>; files: Map<string, Place> } {
  const { files, folders: stamps } = listing;
  if (files.size >= MOST_FILES_INSIDE) return listing;
  let folders = places;
  for (let depth = 0; depth < DEEPEST_INSIDE && folders.length > 0; depth++) {
    const deeper: typeof folders = [];
    for (const { folder, place } of folders) {
      const stamp = changeStamp(folder);
      let entries;
      try {
        entries = readdirSync(folder, { withFileTypes: true });
      } catch {
        // A place not there yet is listed once it is; a file, or one not to be read, holds none.
        if (stamp === 'none') stamps.set(folder, stamp);
        continue;
      }
      stamps.set(folder, stamp);
      for (const entry of entries) {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) {
          if (!HOLD_NO_SETTINGS.has(entry.name)) deeper.push({ folder: path, place });
        } else if (entry.isFile()) {
          const id = identity(path);
          if (id !== undefined && !files.has(id)) files.set(id, place);
          if (files.size >= MOST_FILES_INSIDE) return listing;
        }
      }
    }
    folders = deeper;
  }
  return listing;
}
