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
/**
 * Latin letters past ASCII that read as themselves: those a letter of ASCII carries an accent in
 * (`é`, `ñ`, decomposed), and these. Another (`ɡ`, dotless `ı`, small capital `ᴄ`) may read as an
 * ASCII letter: `github.ᴄom` is not github.com.
 */
const LATIN_OF_ITS_OWN = new Set([...'ßẞæœøłđðþħəÆŒØŁĐÐÞĦƏ']);
/**
 * In what a shell reads, the signs past ASCII that read as those that hide code from a reader:
 * quotes (`-m ˈfix; rm -rf ~ˈ` quotes nothing, and `rm` runs), `#` (the rest is no comment),
 * `<<` (the lines after are no heredoc) and `\\` (no line goes on); and Latch's own `⟨` `⟩`, so
 * that no text fakes a character written out. The modifier letters, the saltillo and the clicks
 * are drawn as quotes and bars; the rest by name. Signs that compatibility folds into those
 * (fullwidth `＃` and `＂`, a small `﹟`) are found by that (HIDING_SIGN).
 */
const HIDES_CODE =
  /[\p{Pi}\p{Pf}\u2018-\u201F\u2032-\u2037\u2057\u275B-\u2760\u301D-\u301F\u02B0-\u02FF\uA700-\uA721\uA788-\uA78C\u01C0-\u01C3\u266F\u22D5\u226A\u2AA1\u2216\u29F5\u29F9\u27E8\u27E9]/u;
const HIDING_SIGN = /^["'`#<\\]+$/;
/** Whether a shell would read a sign other than it seems: see HIDES_CODE. */
const hidesCode = (character: string) =>
  HIDES_CODE.test(character) || HIDING_SIGN.test(character.normalize('NFKC'));

/** Unassigned and private-use code points: a font draws them as anything, or nothing. */
const UNKNOWN = /[\p{Cn}\p{Co}]/u;
/** Accents one letter may carry: beyond them, marks stack over the lines around. */
const MOST_MARKS = 2;
/** A word, as a name is: letters, marks and digits, with the dots, dashes and underscores of `x.com`. */
const WORD = /[\p{L}\p{M}\p{N}._-]+/gu;

const codeOf = (character: string) =>
  `⟨U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`;

/**
 * Where, in a word with Latin letters, a letter only looks like one: another script's
 * (`gіthub.com` with a Cyrillic `і` reads as GitHub), a compatibility form (fullwidth `ｇ`,
 * mathematical `𝐠`, the ligature `ﬁ`), a Latin one drawn as an ASCII one (`ɡ`), an accent that
 * makes no letter of its own; and every letter of a word whose letters are all drawn as ASCII
 * ones (`рір`). A word of another script that reads as itself (`Привет`) has none. The offsets
 * of those characters in the text.
 */
function lookalikes(text: string): Set<number> {
  const found = new Set<number>();
  for (const { 0: word, index } of text.matchAll(WORD)) {
    if (!NOT_ASCII.test(word)) continue;
    const letters = [...word].filter((character) => /\p{L}/u.test(character));
    const readsAsLatin =
      LATIN_LETTER.test(word) ||
      (letters.length > 0 && letters.every((letter) => DRAWN_AS_ASCII.has(letter)));
    if (!readsAsLatin) continue;
    let at = index;
    let last = '';
    for (const character of word) {
      const mark = /\p{M}/u.test(character);
      const looksLatin =
        character > '\x7f' &&
        (LOOKS_LATIN.test(character) ||
          character.normalize('NFKC') !== character ||
          (LATIN_LETTER.test(character) && !readsAsItself(character)) ||
          // `i` and a dot above reads as `i`.
          (mark && [...(last + character).normalize('NFC')].length > 1));
      if (looksLatin) found.add(at);
      last = looksLatin ? '' : mark ? (last + character).normalize('NFC') : character;
      at += character.length;
    }
  }
  return found;
}

/** A Latin letter past ASCII that reads as no ASCII letter (see LATIN_OF_ITS_OWN). */
const readsAsItself = (letter: string) =>
  LATIN_OF_ITS_OWN.has(letter) || /^[a-z][\u0300-\u036f]+$/i.test(letter.normalize('NFD'));

/**
 * Writes out, as `⟨U+00A0⟩`, each character of a text that runs (a command, a path, a folder, a
 * file's content) that would otherwise read as something it is not: one cleaning would remove
 * (controls, invisible and bidi characters), a space that is not a space (a no-break space before
 * `#` is no comment to the shell, and what follows runs), a carriage return, right-to-left
 * letters, a letter that only looks Latin in a Latin word, a mark on no letter or a third on
 * one, and code points a font may draw as anything; in what a shell reads (`shell`), the signs
 * that would hide code from a reader (HIDES_CODE). Newline and tab stay in a multi-line text.
 * Cleaning the result changes nothing.
 */
export function revealHidden(text: string, options: { multiline: boolean; shell?: boolean }): string {
  let revealed = '';
  // How many marks the character before carries; none when it is no letter or digit to carry one.
  let marks: number | undefined;
  // Only a text with a character past ASCII can hold a lookalike.
  const looksLatin = NOT_ASCII.test(text) ? lookalikes(text) : new Set<number>();
  let at = 0;
  for (const character of text) {
    const codePoint = character.codePointAt(0)!;
    at += character.length;
    // Printable ASCII, most of any command, needs no look-up.
    if (codePoint > 0x20 && codePoint < 0x7f) {
      revealed += character;
      marks = /[a-z0-9]/i.test(character) ? 0 : undefined;
      continue;
    }
    const plain = character === ' ' || (options.multiline && (character === '\n' || character === '\t'));
    const mark = /\p{M}/u.test(character);
    const hidden =
      !plain &&
      (looksLatin.has(at - character.length) ||
        isControl(codePoint) ||
        isInvisible(codePoint) ||
        isLoneSurrogate(codePoint) ||
        UNKNOWN.test(character) ||
        BLANK_LOOKING.test(character) ||
        RIGHT_TO_LEFT.test(character) ||
        (options.shell === true && hidesCode(character)) ||
        // A mark on nothing (after a space, before `#`) or one too many draws over its neighbours.
        (mark && (marks === undefined || marks >= MOST_MARKS)));
    revealed += hidden ? codeOf(character) : character;
    if (mark) marks = hidden || marks === undefined ? undefined : marks + 1;
    else marks = !hidden && /[\p{L}\p{N}]/u.test(character) ? 0 : undefined;
  }
  return revealed;
}
