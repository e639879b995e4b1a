/**
 * The arrival process of an open-loop rate cell, as text ("poisson", "constant", "gamma:0.5": the
 * suite's `matrix.arrival`, LLM_BENCH_ARRIVAL and the result's `arrival`) and as a value.
 * load/arrivals.ts draws the schedule from it.
 */
import { decimalNumber } from './decimal.js';

export type Arrival = { kind: 'constant' } | { kind: 'poisson' } | { kind: 'gamma'; burstiness: number };

export const ARRIVAL_KINDS = ['poisson', 'constant', 'gamma'] as const;

/** The canonical text of a process: "poisson", "constant", "gamma:0.5". */
export function arrivalText(a: Arrival): string {
  return a.kind === 'gamma' ? `gamma:${a.burstiness}` : a.kind;
}

/**
 * The process a text names, or the reason it names none (for the caller's error, which names its
 * field): "poisson", "constant", "gamma:B" with a burstiness B > 0 (vLLM's convention: gamma gaps
 * of shape B, coefficient of variation 1/√B; B = 1 is Poisson).
 */
export function parseArrival(text: string): Arrival | { error: string } {
  const t = text.trim().toLowerCase();
  if (t === 'poisson' || t === 'constant') return { kind: t };
  const m = /^gamma\s*:\s*(.+)$/.exec(t);
  if (t === 'gamma' || (m && m[1]!.trim() === '')) return { error: 'gamma needs a burstiness: "gamma:0.5" (below 1 burstier than Poisson, above 1 smoother)' };
  if (m) {
    const b = decimalNumber(m[1]!);
    if (!Number.isFinite(b) || b <= 0) return { error: `the burstiness must be a number above 0, got "${m[1]!.trim()}" (e.g. "gamma:0.5")` };
    // beyond these the process is a burst of everything at once, or a clock: say constant
    if (b < 0.01 || b > 1000) return { error: `a burstiness of ${m[1]!.trim()} is outside 0.01 … 1000 (below, nearly every request would come in one burst; above, use "constant")` };
    return { kind: 'gamma', burstiness: b };
  }
  return { error: `"${text}" is not an arrival process: use poisson (the default), constant, or gamma:B with a burstiness B > 0 (e.g. gamma:0.5)` };
}
