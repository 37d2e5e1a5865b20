/**
 * Code points that change how text looks without being seen: the bidi marks, embeddings,
 * overrides and isolates of Trojan Source (CVE-2021-42574), the zero-width characters, the word
 * joiner, the byte-order mark, and the tag characters that can spell a whole hidden sentence.
 */
export function isInvisible(codePoint: number): boolean {
  return (
    codePoint === 0x061c ||
    (codePoint >= 0x200b && codePoint <= 0x200f) ||
    (codePoint >= 0x202a && codePoint <= 0x202e) ||
    codePoint === 0x2060 ||
    (codePoint >= 0x2066 && codePoint <= 0x2069) ||
    codePoint === 0xfeff ||
    (codePoint >= 0xe0000 && codePoint <= 0xe007f)
  );
}

/** C0 controls, DEL and C1 controls. */
export function isControl(codePoint: number): boolean {
  return codePoint <= 0x1f || (codePoint >= 0x7f && codePoint <= 0x9f);
}

/** Half of a UTF-16 surrogate pair standing alone: it has no UTF-8 form. */
export function isLoneSurrogate(codePoint: number): boolean {
  return codePoint >= 0xd800 && codePoint <= 0xdfff;
}
