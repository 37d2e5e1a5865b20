/** How many letters of a short-option word may come before its value: `tar -xvzfa.tar` is four. */
const MOST_FLAGS_BEFORE_VALUE = 8;

/** The value a word gives after a `=`: an option's (`--directory=..`) or any `name=` (`dd of=../.bashrc`). */
export const valueAfterEquals = (text: string): string | undefined => /^[^=/]+=(.+)$/s.exec(text)?.[1];

/**
 * The values a short-option word may give glued to it, after any letters before it (`sort -oFILE`,
 * `tar -C..`, `date -uf./x`), as getopt reads them. Which letter takes a value is each program's
 * own, so every tail after a letter is one.
 */
export function gluedValues(text: string): string[] {
  const [, letters = '', rest = ''] = /^-([A-Za-z]+)(.*)$/s.exec(text) ?? [];
  const values: string[] = [];
  for (let at = 1; at <= Math.min(letters.length, MOST_FLAGS_BEFORE_VALUE); at++) {
    const value = letters.slice(at) + rest;
    if (value !== '') values.push(value);
  }
  return values;
}

/** Every value a word may give a program, each a word of its own (a path, perhaps). */
export function optionValues(text: string): string[] {
  const afterEquals = valueAfterEquals(text);
  return afterEquals === undefined ? gluedValues(text) : [afterEquals, ...gluedValues(text)];
}
