import { wordText, type Word } from './commandWords.ts';
import type { ProtectedPlaces } from './protectedPlaces.ts';
import type { Note } from './selfProtection.ts';

/**
 * Latch's names in words, wherever the command runs and however the word is built: a secret's
 * (`totp.json`, also inside `open(".latch/totp.json")`), its home's (`.latch`, or a custom
 * LATCH_HOME's last part), its socket's, and a project's hook settings (`.claude/settings.json`).
 */
export function namesTouch(words: Iterable<Word>, places: ProtectedPlaces, note: Note): void {
  for (const word of words) {
    const text = wordText(word);
    for (const guard of ['secrets', 'files', 'hooks'] as const) {
      const named = places.names[guard].exec(text);
      if (named) note(guard, named[1]!);
    }
  }
}
