/**
 * The columns the all-measurements table may add after METHOD.md's set (LLM_BENCH_COLUMNS, issue
 * 59): the figures users of vLLM's `benchmark_serving`, SGLang, GuideLLM and AIPerf read first,
 * and the percentiles its latency columns show (LLM_BENCH_PERCENTILES). METHOD's set is the
 * default; each of these is a figure of the cell (docs/method.md).
 */
export const EXTRA_COLUMNS = ['ttft', 'tbt', 'itl', 'maxGap', 'tpot', 'e2e', 'requestsPerSecond'] as const;
export type ExtraColumn = (typeof EXTRA_COLUMNS)[number];

/** The extra columns that show a latency distribution at percentiles, and their names on the pages. */
export const PERCENTILE_COLUMNS = { ttft: 'TTFT', tbt: 'TBT', itl: 'ITL', tpot: 'TPOT', e2e: 'E2E latency' } as const satisfies Partial<Record<ExtraColumn, string>>;
export type PercentileColumn = keyof typeof PERCENTILE_COLUMNS;

/** The percentiles a latency column shows without LLM_BENCH_PERCENTILES: the distribution's own fixed quantiles (ITL has p95 too). */
export const DEFAULT_COLUMN_PERCENTILES: Readonly<Record<PercentileColumn, readonly number[]>> = {
  ttft: [50, 90, 99],
  tbt: [50, 90, 99],
  itl: [50, 95, 99],
  tpot: [50, 90, 99],
  e2e: [50, 90, 99],
};

/** The columns LLM_BENCH_PERCENTILES adds when LLM_BENCH_COLUMNS is not given: the latencies vLLM's benchmark prints at its percentiles. */
export const PERCENTILES_DEFAULT_COLUMNS: readonly ExtraColumn[] = ['ttft', 'tpot', 'itl', 'e2e'];

/** A percentile's name in a distribution's `percentiles` and in a column's heading (LLM_BENCH_PERCENTILES): 50 → p50, 99.9 → p99.9. */
export function percentileName(p: number): string {
  return `p${p}`;
}

export function isPercentileColumn(c: ExtraColumn): c is PercentileColumn {
  return c in PERCENTILE_COLUMNS;
}

/** An extra column's heading on the pages: `ITL p50 / p95 / p99`, `TTFT p50 / p99.9`, `Longest gap`. */
export function extraColumnTitle(c: ExtraColumn, percentiles?: readonly number[]): string {
  if (c === 'maxGap') return 'Longest gap';
  if (c === 'requestsPerSecond') return 'Completed req/s';
  const ps = percentiles && percentiles.length > 0 ? percentiles : DEFAULT_COLUMN_PERCENTILES[c];
  return `${PERCENTILE_COLUMNS[c]} ${ps.map(percentileName).join(' / ')}`;
}
