import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, posix } from 'node:path';

/** The longest path the kernel resolves (PATH_MAX on Linux): a longer one cannot be opened at all. */
export const PATH_MAX = 4096;
/** How many links the kernel follows in one path (Linux's MAXSYMLINKS) before it gives up. */
export const MAX_LINKS = 40;

/**
 * A path from a folder, as the kernel walks it: its `..` are kept for the walk. Taken out as text
 * (`path.resolve`), `link/..` cancels out, where the kernel goes to the parent of where the link
 * leads (`ln -s . d; ln -s d/.. up`: `up` is the folder above).
 */
export const asWalked = (folder: string, path: string): string =>
  path.startsWith('/') ? path : `${folder}/${path}`;

/** What one look at a path found: where it links to, or whether anything is there. */
type Look = { linksTo: string } | { found: boolean };

export interface PathWalk {
  /**
   * The folder the agent's tool runs in. `/proc/self` is the process that looks: followed here, it
   * would be the daemon, so `/proc/self/cwd` leads there instead (and `/proc/self/root` to `/`).
   */
  processFolder?: string;
  /** Looks already made, shared by the paths of one call: they share their folders. */
  looks?: Map<string, Look>;
  /** Called with each path before it is looked at; it may throw to end the walk there. */
  beforeLook?: (path: string) => void;
}

/**
 * Where an absolute path leads, walked name by name as the kernel walks it: a link's target read
 * from the folder the link is in, a `..` taken from the real folder reached so far (after a link,
 * from where the link leads, not from the text). Names after one that does not exist are kept as
 * written, until a `..` climbs back to where it was (a tool may make the folders first): a link
 * to `totp.json`, a link to where it would be (writing through it creates it), or a file about to
 * be written through a linked folder, all lead to the place they would touch. A loop of links
 * leads nowhere, as for the kernel: the path is kept as it was given. One too long to open as
 * written is walked as a tool that takes its `.` and `..` out would open it.
 */
export function realPath(
  path: string,
  { processFolder, looks = new Map(), beforeLook }: PathWalk = {},
): string {
  if (path.length > PATH_MAX) path = posix.normalize(path);
  if (path.length > PATH_MAX) return path;
  const pending = path.split('/').reverse();
  const nextName = () => pending.findLast((name) => name !== '' && name !== '.');
  let real = '/';
  let links = 0;
  // How many names after the last that exists: none is looked at until `..` climbs back.
  let missing = 0;
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      real = dirname(real);
      missing = Math.max(0, missing - 1);
      continue;
    }
    const through = real === '/proc' && (name === 'self' || name === 'thread-self') ? nextName() : undefined;
    if (processFolder !== undefined && (through === 'cwd' || through === 'root')) {
      while (pending.pop() !== through);
      if (++links > MAX_LINKS) return path;
      if (through === 'cwd') pending.push(...processFolder.split('/').reverse());
      real = '/';
      continue;
    }
    const next = real === '/' ? `/${name}` : `${real}/${name}`;
    if (missing === 0) {
      beforeLook?.(next);
      const look = lookAt(next, looks);
      if ('linksTo' in look) {
        if (++links > MAX_LINKS) return path;
        if (look.linksTo.startsWith('/')) real = '/';
        pending.push(...look.linksTo.split('/').reverse());
        continue;
      }
      if (!look.found) missing = 1;
    } else missing++;
    real = next;
  }
  return real;
}

function lookAt(path: string, looks: Map<string, Look>): Look {
  let look = looks.get(path);
  if (look === undefined) {
    try {
      const found = lstatSync(path, { throwIfNoEntry: false });
      look = found?.isSymbolicLink() ? { linksTo: readlinkSync(path) } : { found: found !== undefined };
    } catch {
      // A name too long, a file where a folder should be, no permission to look: nothing further.
      look = { found: false };
    }
    looks.set(path, look);
  }
  return look;
}
