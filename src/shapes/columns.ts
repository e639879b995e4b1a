/**
 * The columns the all-measurements table may add after METHOD.md's set (LLM_BENCH_COLUMNS, issue
 * 59): the figures users of vLLM's `benchmark_serving`, SGLang, GuideLLM and AIPerf read first.
 * METHOD's set is the default; each of these is a figure of the cell (docs/method.md).
 */
export const EXTRA_COLUMNS = ['itl', 'maxGap', 'tpot', 'e2e', 'requestsPerSecond'] as const;
export type ExtraColumn = (typeof EXTRA_COLUMNS)[number];

/** Each extra column's heading on the pages. */
export const EXTRA_COLUMN_TITLES: Readonly<Record<ExtraColumn, string>> = {
  itl: 'ITL p50 / p95 / p99',
  maxGap: 'Longest gap',
  tpot: 'TPOT p50 / p90 / p99',
  e2e: 'E2E latency p50 / p90 / p99',
  requestsPerSecond: 'Completed req/s',
};
