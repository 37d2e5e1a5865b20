import { isControl, isInvisible, isLoneSurrogate } from './invisibleCharacters.ts';

export interface SanitizeOptions {
  /** The most UTF-8 bytes the result may have, the ellipsis included. At least 3. */
  maxBytes: number;
  /** Keep newline and tab (a command's detail); otherwise they go too (a title). */
  multiline: boolean;
}

export interface SanitizedText {
  text: string;
  /** True when anything was removed or cut: the app then shows a "text shortened" mark. */
  changed: boolean;
}

const ELLIPSIS = '…';
/** What ends or spaces a line (Unicode's line and paragraph separators too): a space in a one-line text. */
const LINE_BREAKS = new Set(['\n', '\r', '\t', '\u2028', '\u2029']);
const ELLIPSIS_BYTES = 3;

/**
 * Cleans a string from an agent before anyone sees or signs it (design.md, "Hard rules"):
 * removes controls, bidi and zero-width characters, tags and lone surrogates (a one-line text's
 * line breaks and tabs become spaces), then cuts to
 * `maxBytes` at a whole code point and ends with "…". Idempotent: cleaning clean text changes
 * nothing, which is how the wire parsers tell clean text from unclean.
 */
export function sanitizeText(text: string, options: SanitizeOptions): SanitizedText {
  const kept: string[] = [];
  let removed = false;
  for (const character of text) {
    const codePoint = character.codePointAt(0)!;
    const allowedWhitespace = options.multiline && (character === '\n' || character === '\t');
    if (!options.multiline && LINE_BREAKS.has(character)) {
      // A break in a line becomes a space: removed, `ls\nproject · host` read as one word.
      removed = true;
      kept.push(' ');
    } else if (
      (isControl(codePoint) && !allowedWhitespace) ||
      isInvisible(codePoint) ||
      isLoneSurrogate(codePoint)
    ) {
      removed = true;
    } else {
      kept.push(character);
    }
  }
  const { text: cut, truncated } = cutToBytes(kept, options.maxBytes);
  return { text: cut, changed: removed || truncated };
}

function cutToBytes(characters: string[], maxBytes: number): { text: string; truncated: boolean } {
  let bytes = 0;
  let fitsWithEllipsis = 0; // how many characters fit while leaving room for "…"
  for (let i = 0; i < characters.length; i++) {
    bytes += utf8Width(characters[i]!.codePointAt(0)!);
    if (bytes <= maxBytes - ELLIPSIS_BYTES) fitsWithEllipsis = i + 1;
    if (bytes > maxBytes) {
      return { text: characters.slice(0, fitsWithEllipsis).join('') + ELLIPSIS, truncated: true };
    }
  }
  return { text: characters.join(''), truncated: false };
}

function utf8Width(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/** Marks past the four one character may carry (Vietnamese stacks two, Tibetan a few). */
const STACKED_MARKS = /(?<=\p{M}{4})\p{M}+/gu;

/**
 * An agent's text without the marks stacked past four on one character, which draw over the lines
 * around, the app's own words and buttons included: for the daemon to clean with, before
 * sanitizeText (the app need not carry it: a relay that sends such text could send any app).
 */
export function withoutStackedMarks(text: string): string {
  return text.replace(STACKED_MARKS, '');
}
