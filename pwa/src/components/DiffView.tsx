const LINE_KINDS: Record<string, string> = { '+': 'diff-added', '-': 'diff-removed', '@': 'diff-hunk' };

/**
 * A unified diff, one line per row. Each line keeps its "+" or "-" as text, so what is added or
 * removed never rests on colour alone; the tints only help the eye.
 */
export function DiffView({ diff }: { diff: string }) {
  const lines = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n');
  return (
    <pre
      class="diff"
      aria-label="Changes: lines starting with + are added, lines starting with − are removed"
    >
      {lines.map((line, index) => {
        const header = line.startsWith('--- ') || line.startsWith('+++ ');
        return (
          <span key={index} class={header ? 'diff-file' : (LINE_KINDS[line[0] ?? ''] ?? 'diff-context')}>
            {line}
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}
