import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { cutToStartAndEnd } from '../../shared/text/keepStartAndEnd.ts';
import { revealHidden } from '../../shared/text/revealHidden.ts';
import { unifiedDiff, type DiffLabels } from '../diff/unifiedDiff.ts';
import { servedFileSystem } from './servedFileSystem.ts';

/** Files larger than this are not read to diff against: the edit's own text is shown instead. */
const MOST_FILE_BYTES = 2 * 1024 * 1024;
/**
 * The most of a diff the hook sends: the daemon shows the phone much less (LIMITS.diffBytes, start
 * and end kept), and the socket must still carry the tool input beside it.
 */
export const MOST_DIFF_BYTES = 64_000;

interface Replacement {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

const isReplacement = (value: unknown): value is Replacement =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Replacement).old_string === 'string' &&
  typeof (value as Replacement).new_string === 'string';

/**
 * What a Claude Code file tool (Edit, MultiEdit, Write) would change, as a unified diff: against
 * the file as it is now when it can be read, with real line numbers; else the edit's own old and
 * new text, said to be so. Reads only the file the tool names. Undefined for other tools.
 */
export function fileEditDiff(
  tool: string,
  input: Record<string, unknown>,
  cwd: string | undefined,
): string | undefined {
  const path = input['file_path'];
  if (typeof path !== 'string' || path === '') return undefined;
  const edits =
    tool === 'Edit' && isReplacement(input)
      ? [input]
      : tool === 'MultiEdit' && Array.isArray(input['edits']) && input['edits'].every(isReplacement)
        ? (input['edits'] as Replacement[])
        : undefined;
  if (tool !== 'Write' && !edits) return undefined;
  const absolute = resolve(cwd ?? '/', path);
  const fromCwd = cwd === undefined ? undefined : relative(cwd, absolute);
  const inside = fromCwd !== undefined && fromCwd !== '' && !fromCwd.startsWith('..') && !isAbsolute(fromCwd);
  // On one line, its line breaks written out: a path is the diff's labels and notes, where a
  // newline in it (`a.txt\n+++ b/README.md`) drew rows of a file the tool does not write.
  const name = revealHidden(inside ? fromCwd : absolute, { multiline: false });
  const labels: DiffLabels = inside ? { from: `a/${name}`, to: `b/${name}` } : { from: name, to: name };
  // Not looked at where a process serves it: its answer may never come (servedFileSystem).
  const served = servedFileSystem(absolute);
  const notLooked = served === undefined ? undefined : `it is on ${served}, whose files Latch does not read`;
  const read = served === undefined ? readSmallTextFile(absolute) : undefined;
  const current = read && 'text' in read ? read.text : undefined;
  // Why the file is not compared against, in the one reason that applies.
  const unread = notLooked ?? (read && 'unread' in read ? read.unread : undefined);

  let diff: string;
  if (tool === 'Write') {
    const content = typeof input['content'] === 'string' ? input['content'] : '';
    // A file that exists but cannot be read is not a new file: the diff must not say it is.
    const shownUnread = read && 'missing' in read ? undefined : unread;
    diff =
      (shownUnread ? `# ${name}: ${shownUnread}; it would be replaced by this\n` : '') +
      unifiedDiff(current ?? '', content, current === undefined ? { ...labels, from: '/dev/null' } : labels);
  } else {
    const after = current === undefined ? { unapplied: unread! } : applyEdits(current, edits!);
    diff =
      'text' in after
        ? unifiedDiff(current!, after.text, labels)
        : `# ${name}: ${after.unapplied}; shown is the edit alone, its lines numbered from its own first line\n` +
          edits!.map((edit) => unifiedDiff(edit.old_string, edit.new_string, labels)).join('');
  }
  // Cut, not cleaned: the daemon writes out its hidden characters for the phone (revealHidden).
  return cutToStartAndEnd(diff || `# ${name}: no change\n`, MOST_DIFF_BYTES).text;
}

/**
 * The edits applied in turn, as Claude Code applies them; or why they cannot be: one's old text
 * is not there, or the text would grow past MOST_FILE_BYTES (a short `replace_all` of one
 * character can multiply a file a hundredfold, and the hook must answer, not run out of memory).
 */
function applyEdits(text: string, edits: Replacement[]): { text: string } | { unapplied: string } {
  let result = text;
  for (const [index, edit] of edits.entries()) {
    // MultiEdit's edits are named by their place: which one missed is what a person checks.
    const named = edits.length > 1 ? `edit ${index + 1}` : 'the edit';
    if (edit.old_string === '') return { unapplied: `${named} names no text to replace` };
    if (!result.includes(edit.old_string))
      return { unapplied: `the text ${named} replaces is not in the file` };
    const times = edit.replace_all ? occurrences(result, edit.old_string) : 1;
    if (result.length + times * (edit.new_string.length - edit.old_string.length) > MOST_FILE_BYTES)
      return { unapplied: 'the edited file would be over 2 MiB' };
    result = edit.replace_all
      ? result.replaceAll(edit.old_string, () => edit.new_string)
      : result.replace(edit.old_string, () => edit.new_string);
  }
  return { text: result };
}

/** How many times `part` occurs in `text`, without overlaps, as replaceAll counts them. */
function occurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count++;
  return count;
}

/**
 * A regular file's text, or why it is not read: missing, not a regular file, too large, not
 * UTF-8. Opened without blocking and checked on the open descriptor, so a FIFO or device swapped
 * in for the file cannot hang the hook.
 */
function readSmallTextFile(path: string): { text: string } | { unread: string; missing?: true } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    return code === 'ENOENT'
      ? { unread: 'the file does not exist', missing: true }
      : { unread: `the file could not be opened (${code})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { unread: 'it is not a regular file' };
    const tooLarge = { unread: 'the file is over 2 MiB' };
    if (stat.size > MOST_FILE_BYTES) return tooLarge;
    // Read up to the limit, not to the size the file claims: /proc's files say 0 and never end.
    const buffer = Buffer.allocUnsafe(MOST_FILE_BYTES + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read)
      read = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > MOST_FILE_BYTES) return tooLarge;
    try {
      return { text: new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length)) };
    } catch {
      return { unread: 'the file is not UTF-8 text' };
    }
  } catch (error) {
    return { unread: `the file could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  } finally {
    closeSync(fd);
  }
}
