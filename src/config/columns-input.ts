/** LLM_BENCH_COLUMNS and LLM_BENCH_PERCENTILES, read by env.ts: which figures the all-measurements table adds after METHOD's set, and at which percentiles. */
import { ConfigError } from '../errors.js';
import { editDistance } from '../spelling.js';
import { EXTRA_COLUMNS, type ExtraColumn } from '../shapes/columns.js';

/**
 * LLM_BENCH_COLUMNS: `method` (METHOD.md's set alone, the default), `all`, or extra columns by
 * name, comma-separated, in the order given: ttft, tbt, itl, maxGap, tpot, e2e, requestsPerSecond.
 */
export function parseColumns(text: string): ExtraColumn[] {
  const names = text.split(',').map((x) => x.trim()).filter((x) => x !== '');
  if (names.length === 1 && names[0]!.toLowerCase() === 'method') return [];
  if (names.length === 1 && names[0]!.toLowerCase() === 'all') return [...EXTRA_COLUMNS];
  const out: ExtraColumn[] = [];
  for (const name of names) {
    const known = EXTRA_COLUMNS.find((c) => c.toLowerCase() === name.toLowerCase());
    if (!known) {
      // the nearest name within 2 edits (tpott → tpot)
      const near = EXTRA_COLUMNS.map((c) => ({ c, d: editDistance(c.toLowerCase(), name.toLowerCase()) }))
        .filter((x) => x.d <= 2)
        .sort((a, b) => a.d - b.d)[0]?.c;
      throw new ConfigError(`LLM_BENCH_COLUMNS: "${name}" is not a column${near ? ` (did you mean ${near}?)` : ''}; give method, all, or some of ${EXTRA_COLUMNS.join(', ')}, e.g. LLM_BENCH_COLUMNS=itl,tpot,e2e`);
    }
    if (!out.includes(known)) out.push(known);
  }
  if (out.length === 0) throw new ConfigError(`LLM_BENCH_COLUMNS names no column; e.g. LLM_BENCH_COLUMNS=itl,tpot,e2e (or method for METHOD's set alone)`);
  return out;
}

/** The most percentiles LLM_BENCH_PERCENTILES takes: a table column holds this many at most. */
export const MAX_PERCENTILES = 10;

/**
 * LLM_BENCH_PERCENTILES: the percentiles each latency distribution reports beside METHOD's median,
 * p90 and p99 (its `percentiles`), and the ones the table's latency columns show: numbers above 0
 * and at most 100, up to 3 decimals, comma-separated (vLLM's `--metric-percentiles`), e.g. 50,90,95,99
 * or 99.9. Returned ascending, each once.
 */
export function parsePercentiles(text: string): number[] {
  const parts = text.split(',').map((x) => x.trim()).filter((x) => x !== '');
  const example = 'e.g. LLM_BENCH_PERCENTILES=50,90,95,99';
  if (parts.length === 0) throw new ConfigError(`LLM_BENCH_PERCENTILES names no percentile; ${example}`);
  const out = new Set<number>();
  for (const part of parts) {
    const p = /^(\d{1,3})(\.\d{1,3})?$/.test(part.replace(/^p/i, '')) ? Number(part.replace(/^p/i, '')) : NaN;
    if (!(p > 0 && p <= 100)) throw new ConfigError(`LLM_BENCH_PERCENTILES: "${part}" is not a percentile; give numbers above 0 and at most 100 (up to 3 decimals), comma-separated, ${example}`);
    out.add(p);
  }
  if (out.size > MAX_PERCENTILES) throw new ConfigError(`LLM_BENCH_PERCENTILES gives ${out.size} percentiles; at most ${MAX_PERCENTILES} fit a column, ${example}`);
  return [...out].sort((a, b) => a - b);
}
