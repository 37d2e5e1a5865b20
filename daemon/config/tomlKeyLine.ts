/** A dotted key at the start of `text` (`a.b`, `"a b".c`, `'a'`), and the text after it. */
function readKey(text: string): { key: string[]; rest: string } | undefined {
  const key: string[] = [];
  let rest = text;
  for (;;) {
    rest = rest.trimStart();
    const quoted = /^"(?:[^"\\]|\\.)*"/.exec(rest) ?? /^'[^']*'/.exec(rest);
    const part = quoted?.[0] ?? /^[A-Za-z0-9_-]+/.exec(rest)?.[0];
    if (part === undefined) return undefined;
    key.push(quoted ? unquote(part) : part);
    rest = rest.slice(part.length).trimStart();
    if (!rest.startsWith('.')) return { key, rest };
    rest = rest.slice(1);
  }
}

/** A quoted key's name: a literal one as written, a basic one with its escapes read (as JSON's). */
function unquote(part: string): string {
  if (part.startsWith("'")) return part.slice(1, -1);
  try {
    return JSON.parse(part) as string;
  } catch {
    return part.slice(1, -1);
  }
}

const startsWith = (path: readonly string[], prefix: readonly string[]) =>
  prefix.every((part, index) => path[index] === part);

/**
 * The line (from 1) where a TOML text sets `key`, a path such as ["kill_switch", "quroum"], or
 * the table it names; undefined if no line does. smol-toml gives values, not positions, so this
 * reads the lines as TOML does: `[table]` and `[[table]]` headers, dotted and quoted keys, a
 * one-line inline table that holds the key, and multi-line strings, whose lines set nothing.
 * It is meant for a text that parsed: it names a line, it does not check one.
 */
export function tomlKeyLine(text: string, key: readonly string[]): number | undefined {
  let table: string[] = [];
  /** The `"""` or `'''` that ends the multi-line string being read. */
  let closing: string | undefined;
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    if (closing) {
      if (line.includes(closing)) closing = undefined;
      continue;
    }
    const trimmed = line.trimStart();
    const header = /^\[\[?/.exec(trimmed)?.[0];
    if (header) {
      const read = readKey(trimmed.slice(header.length));
      // An array's next line (`[1, 2],`) is no header.
      if (!read?.rest.startsWith(']')) continue;
      table = read.key;
      if (startsWith(table, key)) return index + 1;
      continue;
    }
    const read = readKey(trimmed);
    if (!read?.rest.startsWith('=')) continue;
    const path = [...table, ...read.key];
    if (startsWith(path, key) || startsWith(key, path)) return index + 1;
    const value = read.rest.slice(1).trimStart();
    const opening = ['"""', "'''"].find((quotes) => value.startsWith(quotes));
    if (opening && !value.slice(3).includes(opening)) closing = opening;
  }
  return undefined;
}
