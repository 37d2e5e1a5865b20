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

/**
 * The text of `$'…'`, as bash decodes it: `$'\x2elatch'` is `.latch`. As bash, each escape is
 * bytes, read with the rest as UTF-8 (`\xc3\xa9` is `é`); an octal escape is one byte (`\543`
 * is `c`, 0o543 & 0xff); `\uHHHH` and `\UHHHHHHHH` are a character's UTF-8; `\c?` is DEL and
 * `\c\\` one escape; and a NUL (`\0`, `\c@`) ends the string, what follows it in the quotes
 * dropped.
 */
export function decodeAnsiC(text: string): string {
  const bytes: number[] = [];
  // Byte by byte: spread into push, a long literal run passes the arguments' limit (RangeError).
  const add = (part: string) => {
    for (const byte of Buffer.from(part, 'utf8')) bytes.push(byte);
  };
  let from = 0;
  for (const match of text.matchAll(ANSI_C_ESCAPE)) {
    add(text.slice(from, match.index));
    from = match.index + match[0].length;
    const [escape, octal, hex, u4, u8, control, other] = match;
    const code = octal
      ? parseInt(octal, 8) & 0xff
      : hex
        ? parseInt(hex, 16)
        : control
          ? control === '?'
            ? 0x7f
            : control[0]!.toUpperCase().charCodeAt(0) & 0x1f
          : undefined;
    const character = (u4 ?? u8) === undefined ? undefined : parseInt((u4 ?? u8)!, 16);
    // A NUL ends the string there.
    if (code === 0 || character === 0) return Buffer.from(bytes).toString('utf8');
    if (code !== undefined) bytes.push(code);
    else if (character !== undefined) add(character <= 0x10ffff ? String.fromCodePoint(character) : escape);
    else add(ANSI_C[other!] ?? escape);
  }
  add(text.slice(from));
  return Buffer.from(bytes).toString('utf8');
}

/** `\NNN`, `\xHH`, `\uHHHH`, `\UHHHHHHHH`, `\cX` (`\c\\` whole), or any other escaped character. */
const ANSI_C_ESCAPE =
  /\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|c(\\\\|.)|(.))/gs;
