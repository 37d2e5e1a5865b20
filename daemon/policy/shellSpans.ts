/**
 * The ends of the shell's bracketed and quoted spans, and what `$'…'` decodes to: the pieces of
 * POSIX shell syntax commandWords.ts reads through without lexing their insides.
 */

/** From just inside `${`: the index of the `}` that closes it. */
export function closingBrace(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '{') depth++;
    else if (text[i] === '}' && depth-- === 0) return i;
  }
  return text.length;
}

/** From just inside `$'`: the index of the closing quote (a backslash escapes one). */
export function ansiCEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && text[i] !== "'") i += text[i] === '\\' ? 2 : 1;
  return Math.min(i, text.length);
}

const ANSI_C: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** The text of `$'…'`, as bash decodes it: `$'\x2elatch'` is `.latch`. */
export function decodeAnsiC(text: string): string {
  return text.replace(
    /\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|c(.)|(.))/gs,
    (escape, octal?: string, hex?: string, u4?: string, u8?: string, control?: string, other?: string) => {
      const code = octal
        ? parseInt(octal, 8)
        : (hex ?? u4 ?? u8)
          ? parseInt((hex ?? u4 ?? u8)!, 16)
          : control
            ? control.charCodeAt(0) & 0x1f
            : undefined;
      if (code !== undefined) return code <= 0x10ffff ? String.fromCodePoint(code) : escape;
      return ANSI_C[other!] ?? escape;
    },
  );
}
