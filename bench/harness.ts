/** Shared helpers for the benchmarks: statistics and a markdown section per result. */
export interface BenchResult {
  readonly title: string;
  readonly rows: readonly (readonly [string, string])[];
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

export function report(title: string, rows: readonly (readonly [string, string])[]): BenchResult {
  return { title, rows };
}

export function toMarkdown(r: BenchResult): string {
  return [`### ${r.title}`, '', '| measure | value |', '|---|---|', ...r.rows.map(([k, v]) => `| ${k} | ${v} |`), ''].join('\n');
}
