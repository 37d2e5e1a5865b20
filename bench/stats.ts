/** The p-th percentile (nearest rank) of samples in milliseconds. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const median = (samples: readonly number[]) => percentile(samples, 50);

/** High-resolution wall clock in ms, comparable across this process (and its in-process servers). */
export const now = () => performance.timeOrigin + performance.now();

/** One row of the final table: a figure, the baseline beside it, the goal. */
export interface BenchRow {
  name: string;
  figure: string;
  baseline: string;
  goal: string;
  met: boolean | undefined;
  /** Raw numbers for docs/benchmarks.md. */
  data: Record<string, number | string>;
}

export const ms = (value: number) =>
  value >= 100
    ? `${value.toFixed(0)} ms`
    : value >= 1
      ? `${value.toFixed(1)} ms`
      : `${(value * 1000).toFixed(0)} µs`;
