/** How many unchanged lines a hunk shows around each change, as `diff -u` does. */
const CONTEXT_LINES = 3;
/**
 * Comparison steps one diff may take before it gives up on finding the fewest changes. Myers'
 * algorithm costs about (lines × changes): this bound keeps a 100,000-line file with a few edits
 * well under a second, and turns a rewrite of it into the whole-replacement form at once.
 */
const MAX_STEPS = 4_000_000;

export interface DiffLabels {
  /** `a/<path>`, or `/dev/null` for a file that does not exist yet. */
  from: string;
  to: string;
}

type Line = { kind: ' ' | '-' | '+'; text: string };

/**
 * A unified diff of two texts (`--- a/…`, `+++ b/…`, `@@ -l,n +l,n @@` hunks with three lines of
 * context), or '' when they are equal. When the texts differ too much to compare within bounded
 * time, the diff replaces every old line with every new one and says so in a first line, rather
 * than hang the hook.
 */
export function unifiedDiff(before: string, after: string, labels: DiffLabels): string {
  if (before === after) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const middle = shortestEdit(a.slice(head, a.length - tail), b.slice(head, b.length - tail));
  const lines: Line[] = [
    ...a.slice(0, head).map((text) => ({ kind: ' ' as const, text })),
    ...(middle ?? wholeReplacement(a.slice(head, a.length - tail), b.slice(head, b.length - tail))),
    ...a.slice(a.length - tail).map((text) => ({ kind: ' ' as const, text })),
  ];
  const note = middle ? '' : '# too different to compare line by line: shown as a whole replacement\n';
  return `${note}--- ${labels.from}\n+++ ${labels.to}\n${hunks(lines).join('')}`;
}

/** Lines without their breaks; a last line without a break counts as a line too. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

const wholeReplacement = (a: string[], b: string[]): Line[] => [
  ...a.map((text) => ({ kind: '-' as const, text })),
  ...b.map((text) => ({ kind: '+' as const, text })),
];

/**
 * Myers' O(ND) shortest edit script ("An O(ND) Difference Algorithm and Its Variations", 1986),
 * keeping each round's furthest reach to walk back the path. Undefined past MAX_STEPS.
 */
function shortestEdit(a: string[], b: string[]): Line[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const reach = new Int32Array(2 * max + 3);
  const rounds: Int32Array[] = [];
  let steps = 0;
  for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && reach[offset + k - 1]! < reach[offset + k + 1]!)
          ? reach[offset + k + 1]!
          : reach[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
        steps++;
      }
      reach[offset + k] = x;
      if (++steps > MAX_STEPS) return undefined;
      if (x >= n && y >= m) return walkBack(a, b, [...rounds, reach.slice(offset - d, offset + d + 1)]);
    }
    rounds.push(reach.slice(offset - d, offset + d + 1));
  }
  return undefined;
}

function walkBack(a: string[], b: string[], rounds: Int32Array[]): Line[] {
  const lines: Line[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = rounds.length - 1; d > 0; d--) {
    const previous = rounds[d - 1]!;
    const reachBefore = (k: number) => previous[k + d - 1]!;
    const k = x - y;
    const from = k === -d || (k !== d && reachBefore(k - 1) < reachBefore(k + 1)) ? k + 1 : k - 1;
    const fromX = reachBefore(from);
    const fromY = fromX - from;
    while (x > fromX && y > fromY) {
      lines.push({ kind: ' ', text: a[--x]! });
      y--;
    }
    if (from === k + 1) lines.push({ kind: '+', text: b[--y]! });
    else lines.push({ kind: '-', text: a[--x]! });
  }
  while (x > 0 && y > 0) {
    lines.push({ kind: ' ', text: a[--x]! });
    y--;
  }
  return lines.reverse();
}

/** Groups the lines into hunks: changes with their context, merged when their contexts touch. */
function hunks(lines: Line[]): string[] {
  const changed = lines.flatMap((line, index) => (line.kind === ' ' ? [] : [index]));
  const out: string[] = [];
  let first = 0;
  while (first < changed.length) {
    let last = first;
    while (last + 1 < changed.length && changed[last + 1]! - changed[last]! <= 2 * CONTEXT_LINES + 1) last++;
    const start = Math.max(0, changed[first]! - CONTEXT_LINES);
    const end = Math.min(lines.length, changed[last]! + CONTEXT_LINES + 1);
    out.push(hunk(lines, start, end));
    first = last + 1;
  }
  return out;
}

function hunk(lines: Line[], start: number, end: number): string {
  // Line numbers before the hunk, on each side.
  let oldLine = 0;
  let newLine = 0;
  for (const line of lines.slice(0, start)) {
    if (line.kind !== '+') oldLine++;
    if (line.kind !== '-') newLine++;
  }
  const shown = lines.slice(start, end);
  const oldCount = shown.filter((line) => line.kind !== '+').length;
  const newCount = shown.filter((line) => line.kind !== '-').length;
  const range = (before: number, count: number) =>
    count === 1 ? `${before + 1}` : `${count === 0 ? before : before + 1},${count}`;
  return `@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@\n${shown
    .map((line) => `${line.kind}${line.text}\n`)
    .join('')}`;
}
