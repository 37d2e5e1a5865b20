import { escapeRegExp } from '../../shared/text/escapeRegExp.ts';
import { wordText, type Word } from './commandWords.ts';
import { sameName, type Place, type ProtectedPlaces } from './protectedPlaces.ts';
import type { Note } from './selfProtection.ts';
import { mayWrite } from './wordsTouch.ts';

/**
 * Latch's names in words, wherever the command runs and however the word is built: a secret's
 * (`totp.json`, also inside `open(".latch/totp.json")`), its home's (`.latch`, or a custom
 * LATCH_HOME's last part), its socket's, and a project's hook settings (`.claude/settings.json`);
 * and any of its places by its whole path, inside a word too, as a program's own code names it
 * (`python3 -c "open('/home/me/.cargo/env', 'w')"`, `'~/.config/systemd/user/x'`).
 */
export function namesTouch(words: Iterable<Word>, places: ProtectedPlaces, note: Note): void {
  const { pattern, byPath } = wholePaths(places);
  for (const word of words) {
    const text = wordText(word);
    for (const guard of ['secrets', 'files', 'hooks'] as const) {
      const named = places.names[guard].exec(text);
      if (named) note(guard, named[1]!);
    }
    for (const [path] of text.matchAll(pattern)) {
      const place = byPath.get(sameName(path))!;
      const guard = place.kind === 'secret' ? 'secrets' : mayWrite({ place, relation: 'at' });
      if (guard) note(guard, place.target, place.path);
    }
  }
}

const built = new WeakMap<Place[], { pattern: RegExp; byPath: Map<string, Place> }>();

/** Each place's path as written in code: absolute, and from the home folder (`~/`, `$HOME/`). */
function wholePaths(places: ProtectedPlaces) {
  let found = built.get(places.places);
  if (found) return found;
  const home = places.variables['HOME'];
  const byPath = new Map<string, Place>();
  for (const place of places.places) {
    if (place.path === undefined) continue;
    const forms = [place.path];
    if (home && place.path.startsWith(`${home}/`)) {
      const rest = place.path.slice(home.length);
      forms.push(`~${rest}`, `$HOME${rest}`, `\${HOME}${rest}`);
    }
    for (const form of forms) if (!byPath.has(sameName(form))) byPath.set(sameName(form), place);
  }
  // The longest first, so that `~/.latch/totp.json` is the secret, not the folder it is in.
  const alternatives = [...byPath.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  // Whole: not the end of another path (`/srv/home/me/.bashrc`) nor the start of another name.
  const pattern = new RegExp(`(?<![\\w.~$-])(?:${alternatives.join('|')})(?![\\w.-])`, 'gi');
  found = { pattern: alternatives.length > 0 ? pattern : /(?!)/g, byPath };
  built.set(places.places, found);
  return found;
}
