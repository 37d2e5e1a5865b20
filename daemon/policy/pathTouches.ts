import { namesOne, UNKNOWN_SEGMENT, type PathPattern, type PathSegment } from './pathPattern.ts';
import { sameName, type Place, type ProtectedPlaces } from './protectedPlaces.ts';

/** How a path stands to a place: it is the place, inside it, or a folder above it. */
export interface Touch {
  place: Place;
  relation: 'at' | 'inside' | 'above';
}

/**
 * The protected places a path pattern can name, from `base` when it is relative. It is judged
 * twice: as written, with `..` taken away lexically, and as the file system resolves it (the
 * real path of its literal part, the deepest folder that exists), so that a symbolic link to a
 * secret counts as the secret. Places are compared on whole segments (`~/.latch2` is not
 * `~/.latch`). A project's hook settings count wherever they stand (`<any>/.claude/settings.json`).
 */
export function pathTouches(
  pattern: PathPattern,
  base: string | undefined,
  places: ProtectedPlaces,
  realPath: (path: string) => string,
): Touch[] {
  const tailsOf = (path: PathSegment[]) =>
    places.tails
      .filter((tail) => endsWith(path, tail.parts))
      .map((place): Touch => ({ place, relation: 'at' }));
  // A path that does not start at the root may start anywhere: a command can move through
  // folders no reading follows (`cd $HOME/.. && cd dev`, `~dev/…`, `${HOME%/}/…`).
  const known = pattern.segments.slice(pattern.segments.findIndex((segment) => segment !== UNKNOWN_SEGMENT));
  const anywhere = pattern.from === 'root' ? [] : placesNamedAt(normalise(known), places.places);
  // Where it starts is unknown: only a project's settings, named at its end, can be seen.
  if (pattern.from === 'computed' || (pattern.from === 'here' && base === undefined))
    return [...anywhere, ...tailsOf(pattern.segments)];
  const written = [...(pattern.from === 'here' ? base!.split('/').filter(Boolean) : []), ...pattern.segments];
  return [
    ...anywhere,
    ...[normalise(written), resolved(written, realPath)].flatMap((path) => [
      ...places.places.flatMap((place) => {
        const relation = relationTo(path, place.parts);
        return relation ? [{ place, relation }] : [];
      }),
      ...tailsOf(path),
    ]),
  ];
}

/**
 * The places a path from an unknown folder names: its first segments are a place's last ones.
 * It must name two of them (`.lat?h/host-ke?.json` is the host key wherever it stands), or
 * the place's own folder by a name no other folder has (`.lat?h/x` is in Latch's home; `.*`
 * names any folder), so that `dist/config.toml` or `$OUT/settings.json` is no place of Latch's.
 */
function placesNamedAt(path: PathSegment[], places: Place[]): Touch[] {
  if (path.length === 0) return [];
  return places.flatMap((place): Touch[] => {
    const { parts } = place;
    for (let at = 0; at < parts.length; at++) {
      const aligned = Math.min(path.length, parts.length - at);
      if (!path.slice(0, aligned).every((segment, i) => matches(segment, parts[at + i]!))) continue;
      const folderByName =
        aligned === 1 && at === parts.length - 1 && FOLDERS_BY_NAME.has(place.kind) && namesOne(path[0]!);
      if (aligned < 2 && !folderByName) continue;
      const rest = parts.length - at;
      return [{ place, relation: path.length > rest ? 'inside' : path.length < rest ? 'above' : 'at' }];
    }
    return [];
  });
}

/** Folders whose own name is theirs alone (`.latch`, `.claude`), unlike the socket's (`run`). */
const FOLDERS_BY_NAME = new Set<Place['kind']>(['home', 'agent-dir']);

const matches = (segment: PathSegment, name: string) =>
  typeof segment === 'string' ? sameName(segment) === name : segment.test(name);

function relationTo(path: PathSegment[], place: string[]): Touch['relation'] | undefined {
  const shared = Math.min(path.length, place.length);
  for (let i = 0; i < shared; i++) if (!matches(path[i]!, place[i]!)) return undefined;
  return path.length < place.length ? 'above' : path.length > place.length ? 'inside' : 'at';
}

/**
 * A project's hook file is matched by name or glob (`.claude/sett*`); its folder alone only by
 * name, since `.*` in a search pattern (`grep -E "a .* b"`) would otherwise be taken for it.
 */
function endsWith(path: PathSegment[], tail: string[]): boolean {
  const offset = path.length - tail.length;
  if (tail.length === 1) return typeof path[offset] === 'string' && sameName(path[offset]) === tail[0];
  return offset >= 0 && tail.every((name, i) => matches(path[offset + i]!, name));
}

/** `.` dropped and `..` taking the segment before it away, as path.resolve does. */
function normalise(segments: PathSegment[]): PathSegment[] {
  const out: PathSegment[] = [];
  for (const segment of segments) {
    if (segment === '..') out.pop();
    else if (segment !== '.' && segment !== '') out.push(segment);
  }
  return out;
}

/** The literal part resolved by the file system (links, and `..` after a link), the rest after it. */
function resolved(segments: PathSegment[], realPath: (path: string) => string): PathSegment[] {
  const glob = segments.findIndex((segment) => typeof segment !== 'string');
  const literal = glob < 0 ? segments : segments.slice(0, glob);
  const rest = glob < 0 ? [] : segments.slice(glob);
  return normalise([...realPath(`/${literal.join('/')}`).split('/'), ...rest]);
}
