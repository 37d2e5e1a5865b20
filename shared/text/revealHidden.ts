import { isControl, isInvisible, isLoneSurrogate } from './invisibleCharacters.ts';

/** Spaces a font draws blank that are not the space a shell splits words on. */
const BLANK_LOOKING = /[\p{White_Space}\u2800]/u;
/**
 * Right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko and their neighbours): beside them,
 * a browser reorders digits and punctuation without any bidi control, so `-s א 10.0.0.1 ב` shows
 * its address split and swapped.
 */
const RIGHT_TO_LEFT = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;

/**
 * Writes out, as `⟨U+00A0⟩`, each character of a text that runs (a command, a path, a folder, a
 * file's content) that would otherwise read as something it is not: one cleaning would remove
 * (controls, invisible and bidi characters), a space that is not a space (a no-break space before
 * `#` is no comment to the shell, and what follows runs), a carriage return, and right-to-left
 * letters. Newline and tab stay in a multi-line text. Cleaning the result changes nothing.
 */
export function revealHidden(text: string, options: { multiline: boolean }): string {
  let revealed = '';
  for (const character of text) {
    const codePoint = character.codePointAt(0)!;
    // Printable ASCII, most of any command, needs no look-up.
    if (codePoint > 0x20 && codePoint < 0x7f) {
      revealed += character;
      continue;
    }
    const plain = character === ' ' || (options.multiline && (character === '\n' || character === '\t'));
    const hidden =
      !plain &&
      (isControl(codePoint) ||
        isInvisible(codePoint) ||
        isLoneSurrogate(codePoint) ||
        BLANK_LOOKING.test(character) ||
        RIGHT_TO_LEFT.test(character));
    revealed += hidden ? `⟨U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}⟩` : character;
  }
  return revealed;
}
