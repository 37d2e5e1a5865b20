import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  namesOne,
  segmentMatches,
  UNKNOWN_SEGMENT,
  type PathPattern,
  type PathSegment,
} from './pathPattern.ts';
import { sameName, type Place, type ProtectedPlaces } from './protectedPlaces.ts';
import { userMayWrite } from './userMayWrite.ts';

/** How a path stands to a place: it is the place, inside it, or a folder above it. */
export interface Touch {
  place: Place;
  relation: 'at' | 'inside' | 'above';
  /**
   * A folder above the place that its owner can rename (`~/.config` above fish's config):
   * moved away, it takes the place with it, and another folder can be moved in its stead.
   */
  movable?: true;
}

/**
 * The protected places a path pattern can name, from `base` when it is relative. It is judged
 * twice: as written, with `..` taken away lexically, and as the file system resolves it (the
 * globs of its folders expanded as the shell would, and the real path of each match: the
 * deepest folder that exists), so that a symbolic link to a secret counts as the secret, however
 * it is named. Places are compared on whole segments (`~/.latch2` is not `~/.latch`). A
 * project's hook settings count wherever they stand (`<any>/.claude/settings.json`).
 */
export function pathTouches(
  pattern: PathPattern,
  base: string | undefined,
  places: ProtectedPlaces,
  realPath: (path: string) => string,
  /** A shell word's path may mean another place than it spells; a file tool's names one file. */
  spelt: 'by a command' | 'exactly' = 'by a command',
): Touch[] {
  // What a file tool writes in a project's agent folder configures the agent: subagents and
  // skills there declare hooks, and hook scripts there run outside any gate. A command's words
  // count only at the folder and its hook files (`cat .claude/commands/x.md` is the policy's).
  const tailsOf = (path: PathSegment[]) =>
    places.tails.flatMap((place): Touch[] =>
      endsWith(path, place.parts)
        ? [{ place, relation: 'at' }]
        : spelt === 'exactly' && place.kind === 'agent-dir' && inFolderNamed(path, place.parts[0]!)
          ? [{ place, relation: 'inside' }]
          : [],
    );
  // Two names of a place's in a row are that place, wherever the path puts them: a command can
  // move through folders no reading follows (`cd $HOME/.. && cd dev`, `~dev/…`, `${HOME%/}/…`)
  // or make a link first (`ln -s ~ h && cat h/.lat?h/…`).
  const anywhere = spelt === 'exactly' ? [] : placesNamedIn(normalise(pattern.segments), places);
  // Where it starts is computed: only a project's settings, named at its end, can be seen.
  if (pattern.from === 'computed') return [...anywhere, ...tailsOf(pattern.segments)];
  // From a folder nobody gave (Codex does not tell its hooks a command's `workdir`), a relative
  // path may start in any folder: it may be any place whose last names it spells whole.
  if (pattern.from === 'here' && base === undefined)
    return [
      ...anywhere,
      ...tailsOf(pattern.segments),
      ...placesEndingIn(normalise(pattern.segments), places),
    ];
  const written = [...(pattern.from === 'here' ? base!.split('/').filter(Boolean) : []), ...pattern.segments];
  return [
    ...anywhere,
    ...[normalise(written), ...resolved(written, realPath)].flatMap((path) => [
      ...places.places.flatMap((place): Touch[] => {
        const relation = relationTo(path, place.parts);
        if (relation !== 'above') return relation ? [{ place, relation }] : [];
        return [{ place, relation, ...movable(place, path.length, places) }];
      }),
      ...tailsOf(path),
    ]),
  ];
}

/**
 * Places found only by the whole path: the last names of Latch's program and of the folders of
 * programs (`node_modules/bindings`, `.local/bin`) are every project's too.
 */
const ONLY_WHERE_THEY_ARE = new Set<Place['kind']>(['program', 'program-folder']);

/** The places, but those found only where they are, whose last names `path` is. */
function placesEndingIn(path: PathSegment[], places: ProtectedPlaces): Touch[] {
  return places.places.flatMap((place): Touch[] => {
    const offset = place.parts.length - path.length;
    if (ONLY_WHERE_THEY_ARE.has(place.kind) || place.whole || path.length === 0 || offset < 0) return [];
    return path.every((segment, i) => segmentMatches(segment, place.parts[offset + i]!))
      ? [{ place, relation: 'at' }]
      : [];
  });
}

/**
 * Whether the folder the first `depth` parts of a place make can be moved, or made, by its
 * owner: one below the home folder, or outside it where the user may write (a user's npm prefix).
 * A folder not there yet counts when it can be made (`mv /tmp/evil ~/.config/fish`). The home
 * folder and what holds it do not: their parents are the system's.
 */
function movable(place: Place, depth: number, places: ProtectedPlaces): { movable?: true } {
  if (place.path === undefined || depth === 0) return {};
  const folder = `/${place.path.split('/').filter(Boolean).slice(0, depth).join('/')}`;
  const home = places.variables['HOME'];
  if (home !== undefined && (home === folder || home.startsWith(`${folder}/`))) return {};
  return userMayWrite(dirname(folder)) ? { movable: true } : {};
}

/**
 * The places named inside a path, wherever they start in it: some of its segments in a row are a
 * place's last ones. They must be two (`.lat?h/host-ke?.json` is the host key wherever it
 * stands), or Latch's home's own name by a pattern that names no other folder (`.lat?h/x` is
 * in it; `.*` names any folder), so that `dist/config.toml` or `$OUT/settings.json` is no place.
 */
function placesNamedIn(path: PathSegment[], places: ProtectedPlaces): Touch[] {
  // Not Latch's program: its paths' last names are every project's too (`node_modules/bindings`).
  return places.places.flatMap((place): Touch[] => {
    if (ONLY_WHERE_THEY_ARE.has(place.kind)) return [];
    const { parts } = place;
    for (let from = 0; from < path.length; from++) {
      if (path[from] === UNKNOWN_SEGMENT) continue;
      for (let at = 0; at < parts.length; at++) {
        const aligned = Math.min(path.length - from, parts.length - at);
        if (!path.slice(from, from + aligned).every((segment, i) => segmentMatches(segment, parts[at + i]!)))
          continue;
        const folderByName =
          aligned === 1 &&
          at === parts.length - 1 &&
          FOLDERS_BY_NAME.has(place.kind) &&
          namesOne(path[from]!);
        if (aligned < 2 && !folderByName) continue;
        const length = path.length - from;
        const rest = parts.length - at;
        if (length < rest) return [{ place, relation: 'above', ...movable(place, at + length, places) }];
        return [{ place, relation: length > rest ? 'inside' : 'at' }];
      }
    }
    return [];
  });
}

/**
 * Folders whose own name is theirs alone (`.latch`), unlike the socket's (`run`) or an agent's,
 * whose name a project's folder shares (`.claude/commands` is the project's as often).
 */
const FOLDERS_BY_NAME = new Set<Place['kind']>(['home']);

function relationTo(path: PathSegment[], place: string[]): Touch['relation'] | undefined {
  const shared = Math.min(path.length, place.length);
  for (let i = 0; i < shared; i++) if (!segmentMatches(path[i]!, place[i]!)) return undefined;
  return path.length < place.length ? 'above' : path.length > place.length ? 'inside' : 'at';
}

/**
 * A project's hook file is matched by name or glob (`.claude/sett*`); its folder alone only by
 * name, since `.*` in a search pattern (`grep -E "a .* b"`) would otherwise be taken for it.
 */
function endsWith(path: PathSegment[], tail: string[]): boolean {
  const offset = path.length - tail.length;
  if (tail.length === 1) return typeof path[offset] === 'string' && sameName(path[offset]) === tail[0];
  return offset >= 0 && tail.every((name, i) => segmentMatches(path[offset + i]!, name));
}

/** Whether a folder of this name holds the path's last part, at any depth. */
const inFolderNamed = (path: PathSegment[], folder: string) =>
  path.slice(0, -1).some((segment) => typeof segment === 'string' && sameName(segment) === folder);

/** `.` dropped and `..` taking the segment before it away, as path.resolve does. */
function normalise(segments: PathSegment[]): PathSegment[] {
  const out: PathSegment[] = [];
  for (const segment of segments) {
    if (segment === '..') out.pop();
    else if (segment !== '.' && segment !== '') out.push(segment);
  }
  return out;
}

/** How many names a path's globs may expand to before the path is judged unexpanded. */
const MOST_EXPANDED = 64;

/**
 * The path as the file system resolves it (links, and `..` after a link): the globs of its
 * folders expanded against those that are there, as the shell does, so that a link a glob names
 * is followed too (`ln -s ~ h && cat [h]/.bashrc`), each match resolved. Its last name stays a
 * pattern, matched against places by name as before (`.*` in a search pattern is no folder).
 * Past a computed segment, a glob that matches nothing, or more matches than MOST_EXPANDED, the
 * rest stays as written.
 */
function resolved(segments: PathSegment[], realPath: (path: string) => string): PathSegment[][] {
  let found = [''];
  for (const [index, segment] of segments.entries()) {
    if (typeof segment === 'string') {
      found = found.map((path) => `${path}/${segment}`);
      continue;
    }
    const last = index === segments.length - 1;
    const matches = last || segment === UNKNOWN_SEGMENT ? [] : expand(found, segment, realPath);
    if (matches.length === 0 || matches.length > MOST_EXPANDED)
      return found.map((path) => normalise([...realPath(path || '/').split('/'), ...segments.slice(index)]));
    found = matches;
  }
  return found.map((path) => normalise(realPath(path || '/').split('/')));
}

/** The entries of each folder that a glob segment names, up to one more than MOST_EXPANDED. */
function expand(folders: string[], glob: PathSegment, realPath: (path: string) => string): string[] {
  const matches: string[] = [];
  for (const folder of folders) {
    const real = realPath(folder || '/');
    let names: string[];
    try {
      names = readdirSync(real);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!segmentMatches(glob, name)) continue;
      matches.push(`${real === '/' ? '' : real}/${name}`);
      if (matches.length > MOST_EXPANDED) return matches;
    }
  }
  return matches;
}
