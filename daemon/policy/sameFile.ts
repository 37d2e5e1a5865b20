import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Touch } from './pathTouches.ts';
import type { Place } from './protectedPlaces.ts';

/** What the file system knows a file by, whatever its path: its device and inode. */
function identity(path: string): string | undefined {
  try {
    const found = statSync(path, { throwIfNoEntry: false, bigint: true });
    return found && `${found.dev}:${found.ino}`;
  } catch {
    return undefined; // no permission to look, a name too long: nothing to compare
  }
}

/**
 * A finder of the place a path is, or is inside, by what the file system says it is: the path
 * itself, or else the nearest of its ancestors that is one. A bind mount of Latch's home, of the
 * home folder above it, or a hard link to a secret, is another name for the same file, which no
 * comparison of names sees. The places are looked at once, for every path asked after.
 */
export function placeByIdentity(places: readonly Place[]): (path: string) => Touch | undefined {
  const known = new Map<string, Place>();
  for (const place of places) {
    const id = place.path === undefined ? undefined : identity(place.path);
    if (id !== undefined && !known.has(id)) known.set(id, place);
  }
  return (path) => {
    for (let current = path, depth = 0; ; depth++) {
      const id = identity(current);
      const place = id === undefined ? undefined : known.get(id);
      if (place) return { place, relation: depth === 0 ? 'at' : 'inside' };
      const parent = dirname(current);
      if (parent === current) return undefined;
      current = parent;
    }
  };
}
