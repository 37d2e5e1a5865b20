/**
 * Unicode's default-ignorable code points, which a font draws as nothing at all, and the format
 * characters beside them that it may draw as nothing too (U+FFF9's annotation anchors, Egyptian
 * and Kaithi format controls).
 */
const DEFAULT_IGNORABLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/u;
/** The first of them (U+00AD, the soft hyphen): plain ASCII text needs no look-up. */
const FIRST_DEFAULT_IGNORABLE = 0xad;

/**
 * Code points that change how text looks without being seen, as one Unicode class rather than a
 * list: the bidi marks, embeddings, overrides and isolates of Trojan Source (CVE-2021-42574), the
 * zero-width characters and joiners, the byte-order mark, the tag characters that can spell a
 * whole hidden sentence, the variation selectors that can carry hidden bytes, the soft hyphen,
 * the Hangul fillers that JavaScript takes for a name (an "invisible" variable in `node -e`), and
 * every other format character.
 */
export function isInvisible(codePoint: number): boolean {
  return codePoint >= FIRST_DEFAULT_IGNORABLE && DEFAULT_IGNORABLE.test(String.fromCodePoint(codePoint));
}

/** C0 controls, DEL and C1 controls. */
export function isControl(codePoint: number): boolean {
  return codePoint <= 0x1f || (codePoint >= 0x7f && codePoint <= 0x9f);
}

/** Half of a UTF-16 surrogate pair standing alone: it has no UTF-8 form. */
export function isLoneSurrogate(codePoint: number): boolean {
  return codePoint >= 0xd800 && codePoint <= 0xdfff;
}
