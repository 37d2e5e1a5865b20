/** Characters a word may hold and still need no quotes in a POSIX shell. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One word for `sh -c`: as it is when that is safe, else in single quotes. */
export function shellQuote(word: string): string {
  return PLAIN.test(word) ? word : quoted(word);
}

/** In single quotes, each `'` closed, escaped and reopened: one word for sh, bash or zsh. */
export const quoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** Words a shell reads as its own syntax where a command's name stands (`if`, `!`, `{`). */
const RESERVED = new Set(
  '! { } [[ ]] case coproc do done elif else esac fi for function if in select then time until while'.split(
    ' ',
  ),
);

/**
 * An argv as one command for `sh -c` that runs what `spawn` runs: its first word is the program,
 * so it is quoted where a shell would read it otherwise, as an assignment (`X=1`) or a reserved
 * word (`if`).
 */
export function shellCommand(argv: readonly string[]): string {
  return argv
    .map((word, index) =>
      index === 0 && (word.includes('=') || RESERVED.has(word)) ? quoted(word) : shellQuote(word),
    )
    .join(' ');
}

/** Unquoted, these make a command more than words: operators, expansions, globs, comments. */
const SYNTAX = new Set([';', '&', '|', '<', '>', '(', ')', '$', '`', '*', '?', '[', '~', '#', '{']);

/**
 * Splits a hook's command as `sh -c` would, for commands that are plain words: quotes and
 * backslashes are undone. Shell syntax cannot be read without running a shell: each such
 * character still ends a word and stands as a word of its own, and `plain` is false.
 */
export function splitShellWords(command: string): { words: string[]; plain: boolean } {
  const words: string[] = [];
  let plain = true;
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  const end = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  for (let index = 0; index < command.length; index++) {
    const char = command[index]!;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === '\\' && '"\\$`'.includes(command[index + 1] ?? '-')) word += command[++index];
      else {
        if (char === '$' || char === '`') plain = false;
        word += char;
      }
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === '\\') {
      word += command[++index] ?? '';
      inWord = true;
    } else if (/\s/.test(char)) {
      end();
    } else if (SYNTAX.has(char)) {
      plain = false;
      end();
      words.push(char);
    } else {
      word += char;
      inWord = true;
    }
  }
  end();
  return { words, plain: plain && quote === undefined };
}
