/**
 * One figure of a cell (or prefill row, or rate cell) against the baseline's: the rule of
 * compare.ts's header (change, worse, allowed, the verdict), and the shapes a comparison is made of.
 * Apart from compare.ts so that the rate cells' comparison (compare-rate.ts) uses the same rule. Pure.
 */
import { formatValue } from './thresholds.js';
import type { CellResult } from '../shapes/result.js';
import { HIGHER_IS_BETTER_FIGURES, type FigureTolerance } from '../thresholds/tolerances.js';

export type Verdict = 'improved' | 'regressed' | 'within-noise' | 'missing';

export interface FigureDelta {
  figure: string;
  base?: number;
  next?: number;
  /** (next − base) / base; undefined when a value is missing */
  change?: number;
  higherIsBetter: boolean;
  tolerance: FigureTolerance;
  /** relative spread of the repeats added to the tolerance (0 when neither side repeated) */
  spread: number;
  verdict: Verdict;
  /** true when this figure fails the gate */
  fails: boolean;
  /** readable verdict line for a failing figure */
  message?: string;
}

export interface RowComparison {
  kind: 'cell' | 'prefill' | 'rate';
  /** "8K/16" for a cell, "8K" for a prefill row, "8K@2" for a rate cell */
  key: string;
  context: number;
  concurrency?: number;
  /** a rate cell's offered rate, requests/s */
  rate?: number;
  /** why its figures were not compared (a rate cell of another arrival process) */
  note?: string;
  baseStatus?: string;
  nextStatus?: string;
  /** a decode cell's statuses, evidence and figures, each side: what its status words read (pages/view.ts statusWords) */
  baseCell?: StatusCell;
  nextCell?: StatusCell;
  figures: FigureDelta[];
}

/** What a decode cell's status words are made of. */
export type StatusCell = Pick<CellResult, 'status' | 'statuses' | 'evidence' | 'figures'>;

/** Relative change of `next` against `base`. */
export function relativeChange(base: number, next: number): number {
  if (base === 0) return next === 0 ? 0 : next > 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  return (next - base) / base;
}

/** `+4.2%`, `−19.5%` (Unicode minus), `+∞%`. */
export function formatChange(change: number): string {
  if (!Number.isFinite(change)) return change > 0 ? '+∞%' : '−∞%';
  const text = `${Math.abs(change * 100).toFixed(1)}%`;
  if (text === '0.0%') return '±0.0%';
  return change < 0 ? `−${text}` : `+${text}`;
}

function formatPercent(fraction: number): string {
  const p = fraction * 100;
  return `${Number.isInteger(p) ? p.toFixed(0) : p.toFixed(1)}%`;
}

/** `(tolerance 5%)`, `(tolerance 10% + spread 3.2%, at least 5 ms)` */
export function toleranceNote(figure: string, tolerance: FigureTolerance, spread: number): string {
  const shownSpread = spread >= 0.0005 ? ` + spread ${formatPercent(spread)}` : '';
  const parts = [`tolerance ${formatPercent(tolerance.relative)}${shownSpread}`];
  const unit = figure.endsWith('Ms') ? ' ms' : figure === 'completedRate' ? ' req/s' : '';
  if (tolerance.absolute > 0) parts.push(`at least ${Number(tolerance.absolute.toPrecision(3))}${unit}`);
  return `(${parts.join(', ')})`;
}

export interface FigureInput {
  /** prefix of messages: "8K/16" or "prefill 8K" */
  label: string;
  figure: string;
  base: number | undefined;
  next: number | undefined;
  tolerance: FigureTolerance;
  spread: number;
  /** the new result has this cell/row (so a missing value there is the cell's own fault) */
  nextPresent: boolean;
}

/** Verdict of one figure (the rule in this file's header). */
export function compareFigure(input: FigureInput): FigureDelta {
  const { label, figure, base, next, tolerance, spread } = input;
  const higherIsBetter = HIGHER_IS_BETTER_FIGURES.has(figure);
  const out: FigureDelta = { figure, higherIsBetter, tolerance, spread, verdict: 'missing', fails: false };
  if (base !== undefined) out.base = base;
  if (next !== undefined) out.next = next;
  if (base === undefined || next === undefined) {
    if (base !== undefined && input.nextPresent) {
      out.fails = true;
      out.message = `${label} ${figure} missing vs baseline ${formatValue(base)}`;
    }
    return out;
  }
  const change = relativeChange(base, next);
  out.change = change;
  const worse = higherIsBetter ? -change : change;
  const allowed = tolerance.relative + spread;
  const beyondFloor = Math.abs(next - base) > tolerance.absolute;
  if (worse > allowed && beyondFloor) {
    out.verdict = 'regressed';
    out.fails = true;
    out.message = `${label} ${figure} ${formatValue(next)} vs baseline ${formatValue(base)}: ${formatChange(change)} ${toleranceNote(figure, tolerance, spread)}`;
  } else if (-worse > allowed && beyondFloor) {
    out.verdict = 'improved';
  } else {
    out.verdict = 'within-noise';
  }
  return out;
}

/**
 * A cell the baseline measured that the new result has without figures (Over capacity, Not run):
 * one failing line naming its status (`label`: "8K/16", "8K@2/s"), not one bare "missing" line per
 * figure; each figure still fails and counts as missing.
 */
export function unmeasuredNow(row: RowComparison, label: string, status: string, reason?: string): void {
  const why = reason ? ` (${reason.replace(/\s+/g, ' ').trim()})` : '';
  row.figures.forEach((f, i) => {
    if (i === 0) f.message = `${label} is ${status} now${why} where the baseline measured it: its figures are missing`;
    else delete f.message;
  });
}
