import { revealHidden } from '../../shared/text/revealHidden.ts';
import { decodeAnsiC } from '../policy/shellSpans.ts';

/**
 * Where a shell reads a command otherwise than its lines read to a person (review kd F3): a line
 * ending in a backslash joins the next one to it, so a next line that looks like a comment
 * (`npm run build\` then `#; npm publish`) runs; a `<<-` here-document ends at its word indented
 * with tabs, so lines that look like the document's content run; a `$'…'` string is what its
 * escapes spell (`$'\x72\x6d -rf x'` is `rm -rf x`), and its `\'` is no closing quote. Latch's
 * notes say so on the card.
 *
 * A reading for the card only, never for the policy (which reads the command whole, as a shell
 * does): it follows quotes, comments and here-documents line by line, and says nothing it is not
 * sure of.
 */
export function shellReadingNotes(command: string): string[] {
  const lines = command.split('\n');
  const notes: string[] = [];
  let quote: "'" | '"' | "$'" | undefined;
  // The `$'…'` being read: its text so far and the line it began on.
  let ansiC: { text: string; line: number } | undefined;
  // The line before ended in a backslash outside quotes: this one's start is inside its last word.
  let continued = false;
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    const pending: { word: string; tabs: boolean }[] = [];
    let joins = false;
    if (ansiC) ansiC.text += '\n';
    for (let i = 0; i < line.length; i++) {
      const character = line[i]!;
      if (quote === "$'") {
        // As bash reads it: a backslash escapes the next character, a quote too (`$'it\'s'`).
        if (character === "'") {
          const { text, line: begun } = ansiC!;
          if (text.includes('\\'))
            notes.push(
              `Bash reads $'${text}' (line ${begun + 1}) as: ${revealHidden(decodeAnsiC(text), { multiline: false, shell: true })}`,
            );
          quote = ansiC = undefined;
        } else if (character === '\\') {
          ansiC!.text += line.slice(i, i + 2);
          i++;
        } else ansiC!.text += character;
        continue;
      }
      if (quote === "'") {
        if (character === "'") quote = undefined;
        continue;
      }
      if (character === '\\') {
        if (i === line.length - 1 && quote === undefined) joins = true;
        i++;
        continue;
      }
      if (quote === '"') {
        if (character === '"') quote = undefined;
        continue;
      }
      if (character === '$' && line[i + 1] === "'") {
        quote = "$'";
        ansiC = { text: '', line: n };
        i++;
      } else if (character === "'" || character === '"') quote = character;
      else if (character === '#' && startsWord(line, i, continued)) break;
      else if (character === '<' && line[i + 1] === '<' && line[i + 2] !== '<' && line[i - 1] !== '<') {
        const start = HERE_DOCUMENT.exec(line.slice(i));
        if (start) {
          pending.push({ word: start[3]!, tabs: start[1] === '-' });
          i += start[0].length - 1;
        }
      }
    }
    if (joins && n + 1 < lines.length && /^\s*#/.test(lines[n + 1]!))
      notes.push(
        `Line ${n + 2} continues line ${n + 1}, whose backslash joins them: its # is no comment, and what follows it runs.`,
      );
    continued = joins;
    // The here-documents begun on this line take the lines after it, each to its end word.
    for (const { word, tabs } of pending) {
      const begun = n + 1;
      let end = n + 1;
      while (end < lines.length && (tabs ? lines[end]!.replace(/^\t+/, '') : lines[end]) !== word) end++;
      if (end >= lines.length) {
        n = lines.length;
        break;
      }
      if (tabs && lines[end]!.startsWith('\t') && end + 1 < lines.length)
        notes.push(
          `The here-document begun on line ${begun} (<<-${word}) ends at line ${end + 1}, where a tab-indented ${word} ends it: ${linesAfter(end + 2, lines.length)} run as commands.`,
        );
      n = end;
    }
  }
  return notes;
}

/** `<<` or `<<-`, then the end word, bare or quoted whole. */
const HERE_DOCUMENT = /^<<(-?)[ \t]*(['"]?)([A-Za-z0-9_.-]+)\2(?![^\s;&|()<>])/;

/** Whether a `#` at `i` starts a word, and so a comment. */
function startsWord(line: string, i: number, continued: boolean): boolean {
  if (i === 0) return !continued;
  return /[\s;&|()<>]/.test(line[i - 1]!);
}

const linesAfter = (from: number, last: number) => (from === last ? `line ${from}` : `lines ${from}–${last}`);
