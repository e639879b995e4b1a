/** LLM_BENCH_COLUMNS, read by env.ts: which figures the all-measurements table adds after METHOD's set. */
import { ConfigError } from '../errors.js';
import { editDistance } from '../spelling.js';
import { EXTRA_COLUMNS, type ExtraColumn } from '../shapes/columns.js';

/**
 * LLM_BENCH_COLUMNS: `method` (METHOD.md's set alone, the default), `all`, or extra columns by
 * name, comma-separated, in the order given: itl, maxGap, tpot, e2e, requestsPerSecond.
 */
export function parseColumns(text: string): ExtraColumn[] {
  const names = text.split(',').map((x) => x.trim()).filter((x) => x !== '');
  if (names.length === 1 && names[0]!.toLowerCase() === 'method') return [];
  if (names.length === 1 && names[0]!.toLowerCase() === 'all') return [...EXTRA_COLUMNS];
  const out: ExtraColumn[] = [];
  for (const name of names) {
    const known = EXTRA_COLUMNS.find((c) => c.toLowerCase() === name.toLowerCase());
    if (!known) {
      const near = EXTRA_COLUMNS.find((c) => editDistance(c.toLowerCase(), name.toLowerCase()) <= 2);
      throw new ConfigError(`LLM_BENCH_COLUMNS: "${name}" is not a column${near ? ` (did you mean ${near}?)` : ''}; give method, all, or some of ${EXTRA_COLUMNS.join(', ')}, e.g. LLM_BENCH_COLUMNS=itl,tpot,e2e`);
    }
    if (!out.includes(known)) out.push(known);
  }
  if (out.length === 0) throw new ConfigError(`LLM_BENCH_COLUMNS names no column; e.g. LLM_BENCH_COLUMNS=itl,tpot,e2e (or method for METHOD's set alone)`);
  return out;
}
