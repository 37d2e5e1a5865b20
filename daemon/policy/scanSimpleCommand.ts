import { isControl } from '../../shared/text/invisibleCharacters.ts';

/** Why a command is not one simple command. */
export type NotSimpleCode =
  | 'empty'
  | 'newline'
  | 'control_character'
  | 'separator'
  | 'substitution'
  | 'grouping'
  | 'redirection'
  | 'comment'
  | 'parameter_operator'
  | 'unclosed_quote'
  | 'ambiguous_quote'
  | 'tab';

export type SimpleCommandScan = { simple: true } | { simple: false; code: NotSimpleCode };

const notSimple = (code: NotSimpleCode): SimpleCommandScan => ({ simple: false, code });

// ${NAME}, ${1}, ${?}: a plain parameter. Operators (${x:-…}, ${x#…}, ${a[…]}) can hold quotes
// and commands of their own, so they are not scanned but refused.
const PLAIN_PARAMETER = /\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])\}/y;
// Redirections that write no file: to another descriptor (2>&1) or to /dev/null.
const HARMLESS_REDIRECTION = /(>&[0-9]+|>[ \t]*\/dev\/null)(?=[ \t]|$)/y;

/**
 * Whether `command` is, to a POSIX shell (bash, zsh, dash), wholly one simple command: one
 * program and its words, so that nothing else runs before, after or inside it. Quotes are
 * followed as the shell does: nothing is special within '…'; within "…" a backslash escapes,
 * and $( and backticks still run commands; $'…' has backslash escapes (but not of its quote:
 * see scanAnsiQuoted). Expansions that only
 * make words ($NAME, ${NAME}, globs, ~, {a,b}) are allowed: they cannot start another command.
 *
 * Anything this scanner is unsure of is "not simple": a newline even when quoted or escaped
 * (bash runs a -c string line by line, so a line before a syntax error still runs), a comment
 * (a quote inside it is no quote), arithmetic, ${…} with operators, an unclosed quote.
 */
export function scanSimpleCommand(command: string): SimpleCommandScan {
  if (/^[ \t]*$/.test(command)) return notSimple('empty');
  for (const character of command) {
    if (character === '\n') return notSimple('newline');
    // NUL ends the string a shell is given; the display drops controls: what runs would differ.
    if (character !== '\t' && isControl(character.codePointAt(0)!)) return notSimple('control_character');
  }
  let wordStart = true;
  for (let i = 0; i < command.length; i++) {
    const character = command[i]!;
    const next = command[i + 1];
    // A policy's patterns part words with spaces (`^date( -u)*( \+[^ '"]*)?$`): a tab, which parts
    // them too, would be read inside a word (`date +%s<tab>-f secret` as one +FORMAT).
    if (character === '\t') return notSimple('tab');
    if (character === ' ') {
      wordStart = true;
      continue;
    }
    const atWordStart = wordStart;
    wordStart = false;
    switch (character) {
      case '\\':
        if (next === undefined) return notSimple('unclosed_quote');
        i++;
        break;
      case "'": {
        const end = command.indexOf("'", i + 1);
        if (end < 0) return notSimple('unclosed_quote');
        i = end;
        break;
      }
      case '"': {
        const end = scanDoubleQuoted(command, i + 1);
        if (typeof end !== 'number') return end;
        i = end;
        break;
      }
      case '$': {
        if (next === "'") {
          const end = scanAnsiQuoted(command, i + 2);
          if (typeof end !== 'number') return end;
          i = end;
          break;
        }
        const expansion = scanDollar(command, i);
        if (typeof expansion !== 'number') return expansion;
        i = expansion;
        break;
      }
      case '`':
        return notSimple('substitution');
      case ';':
      case '&':
      case '|':
        return notSimple('separator');
      case '(':
      case ')':
        return notSimple('grouping');
      case '<':
        return notSimple(next === '(' ? 'substitution' : 'redirection');
      case '>': {
        if (next === '(') return notSimple('substitution');
        HARMLESS_REDIRECTION.lastIndex = i;
        const harmless = HARMLESS_REDIRECTION.exec(command);
        if (!harmless) return notSimple('redirection');
        i += harmless[0].length - 1;
        break;
      }
      case '#':
        if (atWordStart) return notSimple('comment');
        break;
    }
  }
  return { simple: true };
}

/** From just inside "…": the index of the closing quote, or why the command is not simple. */
function scanDoubleQuoted(command: string, from: number): number | SimpleCommandScan {
  for (let i = from; i < command.length; i++) {
    const character = command[i]!;
    if (character === '"') return i;
    if (character === '\\') i++;
    else if (character === '`') return notSimple('substitution');
    else if (character === '$') {
      const expansion = scanDollar(command, i);
      if (typeof expansion !== 'number') return expansion;
      i = expansion;
    }
  }
  return notSimple('unclosed_quote');
}

/**
 * From just inside $'…': the index of the closing quote, or why the command is not simple. In
 * bash and zsh a backslash escapes a quote there; dash reads $'…' as $ and '…', where the quote
 * closes. A command whose quotes close at different places in different shells is refused.
 */
function scanAnsiQuoted(command: string, from: number): number | SimpleCommandScan {
  for (let i = from; i < command.length; i++) {
    if (command[i] === "'") return i;
    if (command[i] === '\\') {
      if (command[i + 1] === "'") return notSimple('ambiguous_quote');
      i++;
    }
  }
  return notSimple('unclosed_quote');
}

/** At a `$`: the index of the expansion's last character, or why the command is not simple. */
function scanDollar(command: string, at: number): number | SimpleCommandScan {
  const next = command[at + 1];
  // $( is a command substitution and $(( arithmetic; $[ is the old arithmetic. Arithmetic can run
  // commands through array subscripts, so both are refused.
  if (next === '(' || next === '[') return notSimple('substitution');
  if (next !== '{') return at;
  PLAIN_PARAMETER.lastIndex = at;
  const plain = PLAIN_PARAMETER.exec(command);
  return plain ? at + plain[0].length - 1 : notSimple('parameter_operator');
}
