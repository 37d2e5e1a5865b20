/** Deeper than any tool's real input (schemas nest a few levels): refused, never written out. */
export const MOST_INPUT_DEPTH = 64;
/** Indenting costs each line its depth: only an input this small in compact form is indented. */
const MOST_INDENTED_BYTES = 16 * 1024;

/**
 * A tool's input as the text a phone shows and self-protection reads: its JSON, indented when
 * small. Indented JSON grows with the square of the nesting (8 KB of arrays 4,000 deep is 32 MB
 * indented, seconds of a daemon's single thread), so the depth is capped and a large input stays
 * compact: the phone is shown its start and end either way.
 */
export function toolInputText(input: unknown): { text: string } | { error: string } {
  if (nestedDeeperThan(input, MOST_INPUT_DEPTH))
    return { error: `the tool input is nested more than ${MOST_INPUT_DEPTH} levels deep` };
  let compact: string | undefined;
  try {
    compact = JSON.stringify(input);
  } catch {
    // A BigInt or a cycle, from an SDK caller: JSON has no way to write either.
    return { error: 'the tool input cannot be written as JSON' };
  }
  if (compact === undefined) return { error: 'the tool input cannot be written as JSON' };
  return { text: compact.length <= MOST_INDENTED_BYTES ? JSON.stringify(input, null, 2) : compact };
}

/** Walked with a stack, not recursion: the depth is the caller's to choose. */
function nestedDeeperThan(value: unknown, most: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [next, depth] = stack.pop()!;
    if (typeof next !== 'object' || next === null) continue;
    if (depth === most) return true;
    for (const member of Object.values(next)) stack.push([member, depth + 1]);
  }
  return false;
}
