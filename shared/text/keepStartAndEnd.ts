import { fromUtf8, utf8, utf8Length } from '../encoding/bytes.ts';
import { sanitizeText, type SanitizedText } from './sanitizeText.ts';

const withThousands = (count: number) => String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** The line that stands for what was cut out: a person must see that something is missing. */
export const notShownMarker = (bytes: number) => `\n… ${withThousands(bytes)} bytes not shown …\n`;

/**
 * Cleans a multi-line text shown to a person (a command, a diff) and, when it is over `maxBytes`,
 * keeps its start and its end around a marker saying how much is not shown: the end of a command
 * (`… | sh`) matters as much as its start. Cuts fall on whole lines where one is near, else on a
 * whole character. `changed` is true whenever cleaning removed or cut anything.
 */
export function keepStartAndEnd(text: string, maxBytes: number): SanitizedText {
  const cleaned = sanitizeText(text, { maxBytes: Number.MAX_SAFE_INTEGER, multiline: true });
  const kept = cutToStartAndEnd(cleaned.text, maxBytes);
  return { text: kept.text, changed: cleaned.changed || kept.changed };
}

/**
 * keepStartAndEnd's cut alone, without cleaning: for a text whose hidden characters are to be
 * written out later (revealHidden), which cleaning first would remove unseen.
 */
export function cutToStartAndEnd(text: string, maxBytes: number): SanitizedText {
  if (utf8Length(text) <= maxBytes) return { text, changed: false };
  const bytes = utf8(text);
  // Room for the widest marker this text could need (everything hidden).
  const room = maxBytes - utf8Length(notShownMarker(bytes.length));
  if (room < 2) return { text: fromUtf8(bytes.subarray(0, characterStart(bytes, maxBytes))), changed: true };

  let headEnd = characterStart(bytes, Math.ceil(room / 2));
  const lastBreak = bytes.lastIndexOf(0x0a, headEnd - 1);
  if (lastBreak >= headEnd / 2) headEnd = lastBreak; // the marker brings its own line break

  const tailRoom = room - Math.ceil(room / 2);
  let tailStart = characterStart(bytes, bytes.length - tailRoom, 'forward');
  const firstBreak = bytes.indexOf(0x0a, tailStart);
  if (firstBreak !== -1 && firstBreak < tailStart + tailRoom / 2) tailStart = firstBreak + 1;

  const shown =
    fromUtf8(bytes.subarray(0, headEnd)) +
    notShownMarker(tailStart - headEnd) +
    fromUtf8(bytes.subarray(tailStart));
  return { text: shown, changed: true };
}

/** What stands for the middle of a line that was cut out of it. */
const LINE_GAP = ' … ';

/**
 * keepStartAndEnd for one line (a title, a folder): cleaned as a line is, and when over
 * `maxBytes`, its start and its end around " … ". The end of `ls; rm -rf ~` or of
 * `/home/dev/…/real-target` is what a person must not miss.
 */
export function keepLineStartAndEnd(text: string, maxBytes: number): SanitizedText {
  const cleaned = sanitizeText(text, { maxBytes: Number.MAX_SAFE_INTEGER, multiline: false });
  if (utf8Length(cleaned.text) <= maxBytes) return cleaned;
  const bytes = utf8(cleaned.text);
  const room = maxBytes - utf8Length(LINE_GAP);
  if (room < 2) return sanitizeText(cleaned.text, { maxBytes, multiline: false });
  const headEnd = characterStart(bytes, Math.ceil(room / 2));
  const tailStart = characterStart(bytes, bytes.length - (room - Math.ceil(room / 2)), 'forward');
  const shown = fromUtf8(bytes.subarray(0, headEnd)) + LINE_GAP + fromUtf8(bytes.subarray(tailStart));
  return { text: shown, changed: true };
}

/** The nearest index at or before (or after) `index` where a UTF-8 character starts. */
function characterStart(bytes: Uint8Array, index: number, direction: 'back' | 'forward' = 'back'): number {
  let at = index;
  const isContinuation = (i: number) => i < bytes.length && (bytes[i]! & 0xc0) === 0x80;
  while (isContinuation(at)) at += direction === 'back' ? -1 : 1;
  return at;
}
