import { expandBraces } from './braceExpansion.ts';
import { ansiCEnd, closingBrace, decodeAnsiC } from './shellSpans.ts';

/**
 * A piece of a shell word: text, whose glob characters are live only where the shell left them
 * unquoted, or a value only running the command would tell (`$x`, `$(…)`), named for its kind.
 */
export type Piece = { text: string; glob: boolean } | { computed: string };
export type Word = Piece[];
/** The words of one command, between separators (`;`, `&&`, `|`, a newline, parentheses). */
export type SimpleCommand = Word[];

const WORD_BREAKS = ' \t\n;&|<>()';
const COMMAND_BREAKS = '\n;&|()';
/** A quoted string holding any of these may be a command another shell runs (`bash -c '…'`). */
const MAY_BE_COMMAND = /[\s;&|<>()`$]/;
const VARIABLE = /[A-Za-z_][A-Za-z0-9_]*|[0-9$!?#@*-]/y;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A shell's positional parameters, as `${1}`, `${10}`, `${@}` name them. */
const POSITIONAL = /^([0-9]+|[@*])$/;
/** What may follow `~` in a tilde prefix: `+` or `-` and a place in the folder stack, or a user's name. */
const TILDE_PREFIX = /[+-]\d*|[A-Za-z0-9._][A-Za-z0-9._-]*|/y;
/** A shell variable's assignment, `name=`: the name is its first group. */
export const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;
/**
 * How deep quoted strings and substitutions are unwrapped: each level is a shell running a
 * string again (`sh -c "sh -c '…'"`). Deeper text is still read, as text, for Latch's names.
 */
const MAX_DEPTH = 16;

/**
 * The commands in `text` and their words, read as a POSIX shell (bash, zsh, dash) would: quotes
 * and backslashes undone (`.la''tch`, `tot\p.json`), `$'…'` decoded, `~` and the `variables`
 * given expanded, the variables the text itself assigns (`d=~/.latch; cat $d/x`), and braces
 * (`.la{tch,x}`, `ke{y..y}`: braceExpansion.ts), each word becoming the words it expands to. What a
 * shell would run again is read again as commands of its own: `$(…)`, backticks, and a quoted
 * string with spaces or shell syntax in it (`bash -c 'cat x'` holds the command `cat x`).
 *
 * It reads every part of the text, including comments and here-documents: a mention counts.
 */
export function commandWords(text: string, variables: Readonly<Record<string, string>>): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  new Lexer(text, new Map(Object.entries(variables)), commands, 0).lex(0, false);
  return commands;
}

const HERE_DOCUMENT_ENDS = new WeakSet<Word>();

/**
 * Whether a word is the delimiter after `<<` (`python3 - <<'EOF'`): the here-document it ends is
 * the program's input, and is in the command's own text.
 */
export const endsHereDocument = (word: Word) => HERE_DOCUMENT_ENDS.has(word);

const WRITTEN = new WeakSet<Word>();

/** Whether a word is the file a `>` or `>>` writes (`cat > x.sh`). */
export const writtenByRedirect = (word: Word) => WRITTEN.has(word);

const READ_AGAIN = new WeakMap<Word, string[]>();
const MAY_BE_PROSE = new WeakSet<SimpleCommand>();

/**
 * Whether a command was read from a quoted string only because it may be one: it may as well be
 * prose (`git commit -m "run npm test first"`).
 */
export const mayBeProse = (command: SimpleCommand) => MAY_BE_PROSE.has(command);

/**
 * Whether `text`, all of a word or of one quoted part of it, was read again as commands of its
 * own with the command (`bash -c 'cat x'`): one without spaces or the shell's syntax was not.
 */
export const readAgain = (word: Word, text: string) => READ_AGAIN.get(word)?.includes(text) ?? false;

/** The text a word spells, a computed piece standing as NUL (no name runs across it). */
export const wordText = (word: Word) => word.map((piece) => ('text' in piece ? piece.text : '\0')).join('');

/** The word's text when it holds nothing computed. */
export const literalText = (word: Word) =>
  word.every((piece) => 'text' in piece) ? wordText(word) : undefined;

class Lexer {
  readonly #text: string;
  readonly #variables: Map<string, string>;
  readonly #commands: SimpleCommand[];
  readonly #depth: number;
  #words: Word[] = [];
  #word: Piece[] = [];
  #inWord = false;
  /** Where the next word goes: the words that end a here-document, or that a `>` writes. */
  #redirectNext: WeakSet<Word> | undefined;
  /** The texts of the word being read that were read again as commands. */
  #wordReadAgain: string[] = [];

  /** Reading a quoted string that may be a command, or prose. */
  readonly #quotedText: boolean;

  constructor(
    text: string,
    variables: Map<string, string>,
    commands: SimpleCommand[],
    depth: number,
    quotedText = false,
  ) {
    this.#text = text;
    this.#variables = variables;
    this.#commands = commands;
    this.#depth = depth;
    this.#quotedText = quotedText;
  }

  /** Reads from `from` to the end, or to the `)` that closes a `$(`; returns the index after it. */
  lex(from: number, closes: boolean): number {
    const text = this.#text;
    let parens = 0;
    let i = from;
    while (i < text.length) {
      const character = text[i]!;
      if (character === ')' && closes && parens === 0) {
        this.#endCommand();
        return i + 1;
      }
      if (character === '(') parens++;
      else if (character === ')') parens--;
      if (WORD_BREAKS.includes(character)) {
        if (COMMAND_BREAKS.includes(character)) this.#endCommand();
        else this.#endWord();
        // `<<` (not `<<<`): the word after it ends a here-document, and names no file. `>` and
        // `>>`: the word after it is a file written.
        if (character === '<' && text[i + 1] === '<' && text[i - 1] !== '<' && text[i + 2] !== '<')
          this.#redirectNext = HERE_DOCUMENT_ENDS;
        else if (character === '>' && text[i - 1] !== '>') this.#redirectNext = WRITTEN;
        i++;
      } else i = this.#piece(i);
    }
    this.#endCommand();
    return i;
  }

  /** Reads the unquoted piece of a word that starts at `i`; returns the index after it. */
  #piece(i: number): number {
    const text = this.#text;
    const next = text[i + 1];
    switch (text[i]) {
      case '\\':
        if (next !== '\n') this.#add(next ?? '', false); // backslash-newline joins two lines
        return i + 2;
      case "'": {
        const end = indexOrEnd(text, "'", i + 1);
        this.#quoted(text.slice(i + 1, end));
        return end + 1;
      }
      case '"':
        return this.#doubleQuoted(i + 1);
      case '`':
        return this.#backticks(i + 1);
      case '$':
        return this.#dollar(i, false);
      case '~': {
        // At a word's start, or after the = or : of an assignment (`--dir=~/x`, `PATH=~/bin:~/y`).
        if (!this.#tildeCanStart()) break;
        TILDE_PREFIX.lastIndex = i + 1;
        const prefix = TILDE_PREFIX.exec(text)?.[0] ?? '';
        const after = text[i + 1 + prefix.length];
        // zsh reads `~$user` as a user's folder, where bash leaves it as it is: any folder.
        if (prefix === '' && after === '$') {
          this.#computed('~');
          return i + 1;
        }
        if (after !== undefined && !'/:'.includes(after) && !WORD_BREAKS.includes(after)) break;
        // `~` is HOME and `~+` the folder it runs in; `~dev`, `~-`, `~+2` may be any folder.
        if (prefix === '') this.#expand('HOME', '~');
        else if (prefix === '+') this.#expand('PWD', '~+');
        else this.#computed(`~${prefix}`);
        return i + 1 + prefix.length;
      }
    }
    this.#add(text[i]!, true);
    return i + 1;
  }

  /** From just inside "…": the index after the closing quote. */
  #doubleQuoted(from: number): number {
    const text = this.#text;
    let again = ''; // the string as a shell that runs it would read it
    let i = from;
    while (i < text.length && text[i] !== '"') {
      const character = text[i]!;
      const next = text[i + 1] ?? '';
      if (character === '\\' && '$`"\\\n'.includes(next)) {
        if (next !== '\n') this.#add(next, false);
        again += next;
        i += 2;
      } else if (character === '$' || character === '`') {
        const end = character === '$' ? this.#dollar(i, true) : this.#backticks(i + 1);
        again += text.slice(i, end);
        i = end;
      } else {
        this.#add(character, false);
        again += character;
        i++;
      }
    }
    this.#inWord = true;
    this.#again(again);
    return i + 1;
  }

  /** From just inside `…`: a command of its own; the index after the closing backtick. */
  #backticks(from: number): number {
    const text = this.#text;
    let inner = '';
    let i = from;
    for (; i < text.length && text[i] !== '`'; i++) {
      if (text[i] === '\\' && '`\\$'.includes(text[i + 1] ?? '-')) i++;
      inner += text[i];
    }
    this.#computed('`…`');
    this.#again(inner, true);
    return i + 1;
  }

  /** At a `$`: an expansion, or a plain `$`. Returns the index after it. */
  #dollar(i: number, quoted: boolean): number {
    const text = this.#text;
    const next = text[i + 1];
    if (next === '(' && this.#depth < MAX_DEPTH) {
      // $( … ) and $(( … )): read to the closing parenthesis as commands of their own.
      this.#computed('$(…)');
      return new Lexer(text, this.#variables, this.#commands, this.#depth + 1).lex(i + 2, true);
    }
    if (next === '{') {
      const end = closingBrace(text, i + 2);
      const inner = text.slice(i + 2, end);
      if (NAME.test(inner) || POSITIONAL.test(inner)) this.#variable(inner, quoted);
      else {
        // ${x:-…}, ${x/…/…}: the operator's words can name a path too.
        this.#computed('${…}');
        this.#again(inner, true);
      }
      return end + 1;
    }
    if (next === "'" && !quoted) {
      const end = ansiCEnd(text, i + 2);
      this.#quoted(decodeAnsiC(text.slice(i + 2, end)));
      return end + 1;
    }
    if (next === '"' && !quoted) return i + 1; // $"…" is a "…" translated
    VARIABLE.lastIndex = i + 1;
    const name = VARIABLE.exec(text)?.[0];
    if (name === undefined) {
      this.#add('$', false);
      return i + 1;
    }
    this.#variable(name, quoted);
    return i + 1 + name.length;
  }

  #variable(name: string, quoted: boolean): void {
    // Unquoted, $IFS splits words: `cat${IFS}~/.latch/x` is two words.
    if (name === 'IFS' && !quoted) this.#endWord();
    else this.#expand(name, `$${name}`, !quoted);
  }

  /** A known variable's value, as a glob when unquoted (`p=.lat?h; cat ~/$p/x`), else computed. */
  #expand(name: string, computed: string, glob = false): void {
    const value = this.#variables.get(name);
    if (value === undefined) this.#computed(computed);
    else this.#add(value, glob);
  }

  #tildeCanStart(): boolean {
    const last = this.#word.at(-1);
    return (
      !this.#inWord ||
      (last !== undefined &&
        'text' in last &&
        last.glob &&
        (last.text.endsWith('=') || last.text.endsWith(':')))
    );
  }

  #quoted(text: string): void {
    this.#add(text, false);
    this.#inWord = true;
    this.#again(text);
  }

  /** Reads `text` again as commands, as the shell that runs it would: always, or when it may be one. */
  #again(text: string, always = false): void {
    if (this.#depth < MAX_DEPTH && (always || MAY_BE_COMMAND.test(text))) {
      this.#wordReadAgain.push(text);
      new Lexer(text, this.#variables, this.#commands, this.#depth + 1, !always).lex(0, false);
    } else if (always) this.#add(text, false);
  }

  #add(text: string, glob: boolean): void {
    this.#inWord = true;
    const last = this.#word.at(-1);
    if (last !== undefined && 'text' in last && last.glob === glob) last.text += text;
    else this.#word.push({ text, glob });
  }

  #computed(kind: string): void {
    this.#inWord = true;
    this.#word.push({ computed: kind });
  }

  #endWord(): void {
    if (this.#inWord) {
      const word = this.#word;
      this.#words.push(word);
      this.#redirectNext?.add(word);
      this.#redirectNext = undefined;
      if (this.#wordReadAgain.length > 0) READ_AGAIN.set(word, this.#wordReadAgain);
      // A variable the command sets for its later words: `d=~/.latch; cat $d/totp.json`.
      const text = literalText(word);
      const assigned = text === undefined ? undefined : ASSIGNMENT.exec(text);
      if (assigned) this.#variables.set(assigned[1]!, text!.slice(assigned[0].length));
    }
    this.#word = [];
    this.#wordReadAgain = [];
    this.#inWord = false;
  }

  #endCommand(): void {
    this.#endWord();
    if (this.#words.length > 0) {
      const command = this.#words.flatMap(expandBraces);
      if (this.#quotedText) MAY_BE_PROSE.add(command);
      this.#commands.push(command);
    }
    this.#words = [];
  }
}

const indexOrEnd = (text: string, search: string, from: number) => {
  const index = text.indexOf(search, from);
  return index < 0 ? text.length : index;
};
