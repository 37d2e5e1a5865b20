const LINE_KINDS: Record<string, string> = { '+': 'diff-added', '-': 'diff-removed', '@': 'diff-hunk' };
const HUNK_HEAD = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/**
 * A unified diff, one line per row. Each line keeps its "+" or "-" as text, so what is added or
 * removed never rests on colour alone; the tints only help the eye. A hunk's lines are counted
 * from its `@@ -l,n +l,n @@`: inside it, a line that starts like a file's header (an added
 * `++ b/x` reads `+++ b/x`) is drawn as the change it is.
 */
export function DiffView({ diff }: { diff: string }) {
  const lines = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n');
  let oldLeft = 0;
  let newLeft = 0;
  return (
    <pre
      class="diff"
      aria-label="Changes: lines starting with + are added, lines starting with − are removed"
    >
      {lines.map((line, index) => {
        const sign = line[0] ?? '';
        let kind = LINE_KINDS[sign] ?? 'diff-context';
        if (oldLeft > 0 || newLeft > 0) {
          if (sign !== '+') oldLeft--;
          if (sign !== '-') newLeft--;
        } else if (line.startsWith('--- ') || line.startsWith('+++ ')) kind = 'diff-file';
        else {
          const hunk = HUNK_HEAD.exec(line);
          oldLeft = hunk ? Number(hunk[1] ?? 1) : 0;
          newLeft = hunk ? Number(hunk[2] ?? 1) : 0;
        }
        return (
          <span key={index} class={kind}>
            {line}
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}
