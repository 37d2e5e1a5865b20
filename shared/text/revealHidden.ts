import { isControl, isInvisible, isLoneSurrogate } from './invisibleCharacters.ts';

/** Spaces a font draws blank that are not the space a shell splits words on. */
const BLANK_LOOKING = /[\p{White_Space}\u2800]/u;
/**
 * Right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko and their neighbours): beside them,
 * a browser reorders digits and punctuation without any bidi control, so `-s א 10.0.0.1 ב` shows
 * its address split and swapped.
 */
const RIGHT_TO_LEFT = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;

/** Scripts with letters drawn like Latin ones: Cyrillic `і` and `о`, Greek `ο`, Cherokee `Ꭺ`, … */
const LOOKS_LATIN =
  /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}\p{Script=Coptic}\p{Script=Lisu}\p{Script=Canadian_Aboriginal}]/u;
const LATIN_LETTER = /\p{Script=Latin}/u;
/**
 * Letters of those scripts drawn as an ASCII letter is (Unicode's confusables): a word of them
 * alone reads as a Latin one, `рір` as pip, `ѕυԁο` as sudo, `~/.ѕѕһ` as ~/.ssh.
 */
const DRAWN_AS_ASCII = new Set([
  ...'аеорсухѕіјһԁӏԛԝүѵɡАВЕКМНОРСТХЅІЈҮԚԜӀҺ',
  ...'οανικρυχγϲϳΑΒΕΖΗΙΚΜΝΟΡΤΥΧ',
  ...'օոսհցքզ',
  ...'ᎪᏴᏟᎠᎬᏀᎻᏆᎫᏦᏞᎷᏢᏚᎢᏙᏔᏃ',
]);
const NOT_ASCII = /[^\0-\x7f]/;
/** A word, as a name is: letters, marks and digits, with the dots, dashes and underscores of `x.com`. */
const WORD = /[\p{L}\p{M}\p{N}._-]+/gu;

const codeOf = (character: string) =>
  `⟨U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`;

/**
 * In a word with Latin letters, writes out each letter that only looks like one: another script's
 * (`gіthub.com` with a Cyrillic `і` reads as GitHub) or a compatibility form (fullwidth `ｇ`,
 * mathematical `𝐠`, the ligature `ﬁ`); so in a word whose letters are all drawn as ASCII ones
 * (`рір`). A word of another script that reads as itself (`Привет`) stays as it is.
 */
function revealLookalikes(text: string): string {
  return text.replace(WORD, (word) => {
    if (!NOT_ASCII.test(word)) return word;
    const letters = [...word].filter((character) => /\p{L}/u.test(character));
    const readsAsLatin =
      LATIN_LETTER.test(word) ||
      (letters.length > 0 && letters.every((letter) => DRAWN_AS_ASCII.has(letter)));
    if (!readsAsLatin) return word;
    let revealed = '';
    for (const character of word)
      revealed +=
        character > '\x7f' && (LOOKS_LATIN.test(character) || character.normalize('NFKC') !== character)
          ? codeOf(character)
          : character;
    return revealed;
  });
}

/**
 * Writes out, as `⟨U+00A0⟩`, each character of a text that runs (a command, a path, a folder, a
 * file's content) that would otherwise read as something it is not: one cleaning would remove
 * (controls, invisible and bidi characters), a space that is not a space (a no-break space before
 * `#` is no comment to the shell, and what follows runs), a carriage return, right-to-left
 * letters, and a letter that only looks Latin in a Latin word. Newline and tab stay in a
 * multi-line text. Cleaning the result changes nothing.
 */
export function revealHidden(text: string, options: { multiline: boolean }): string {
  let revealed = '';
  // Only a text with a character past ASCII can hold a lookalike.
  for (const character of NOT_ASCII.test(text) ? revealLookalikes(text) : text) {
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
    revealed += hidden ? codeOf(character) : character;
  }
  return revealed;
}
