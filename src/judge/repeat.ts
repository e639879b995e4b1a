/**
 * One status for a cell measured n times (LLM_BENCH_REPEAT=n): every status any repeat showed, in
 * the order the status rules list them (the first is the main one); each status's evidence comes
 * from the first repeat that showed it. Valid only when every repeat was. Pure.
 */
import type { CellStatus } from '../shapes/result.js';
import type { CellStatusResult } from './status.js';

const STATUS_ORDER: readonly CellStatus[] = ['not-run', 'client-limited', 'stream-buffered', 'warmup-timed-out', 'errors', 'requests-queued', 'over-capacity', 'valid'];

/** One status for the repeats (see the file header). */
export function combineStatuses(list: readonly CellStatusResult[]): CellStatusResult {
  const first = list[0];
  if (!first) throw new RangeError('combineStatuses needs at least one repeat');
  if (list.length === 1) return first;
  const seen = new Set(list.flatMap((v) => v.statuses));
  const statuses = STATUS_ORDER.filter((s) => seen.has(s) && (s !== 'valid' || seen.size === 1));
  const evidence: CellStatusResult['evidence'] = {};
  for (const v of list) {
    for (const [k, e] of Object.entries(v.evidence)) {
      const key = k as keyof CellStatusResult['evidence'];
      if (evidence[key] === undefined && e !== undefined) (evidence as Record<string, unknown>)[key] = e;
    }
  }
  return { status: statuses[0] ?? 'valid', statuses: statuses.length > 0 ? statuses : ['valid'], evidence };
}
