/**
 * The text of a length distribution (a workload's `in`, `out` and `think`), parsed into a
 * `LengthDistribution` (src/shapes/workload.ts), the inverse of `distributionText` and `thinkText`:
 *
 * | form                           | meaning                                                                 |
 * |--------------------------------|-------------------------------------------------------------------------|
 * | `256`                          | fixed                                                                   |
 * | `uniform(128,512)`             | every whole number 128 … 512 equally likely                             |
 * | `normal(1024,256)`             | normal, rounded, clamped to the least allowed … round(mean + 4·sd)      |
 * | `normal(1024,256,64,2048)`     | normal, rounded, clamped to 64 … 2048                                   |
 * | `hist(1-100:3;101-200:1)`      | bins `min-max:weight` (a bin drawn by weight, then uniform in it); `64:2` is the bin 64-64 |
 *
 * Token values are whole numbers or K-suffixed sizes (K = 1024, as LLM_BENCH_CONTEXTS); a normal's
 * mean and sd may have decimals. Think times are the same forms with a unit on every value (`2s`,
 * `500ms`, `uniform(1s,3s)`), held in whole milliseconds. The rules checked: min ≤ max, sd ≥ 0,
 * weights > 0, lengths whole and at least the least the caller allows (1 for a prompt or output
 * length, 0 for a think time), and a normal's mean inside its clamps.
 */
import type { LengthDistribution } from '../shapes/workload.js';
import { DEFAULTS } from './defaults.js';

export interface DistributionRules {
  /** tokens (plain or K-suffixed numbers) or time (a unit on each value, held in ms) */
  unit: 'tokens' | 'time';
  /** the least value a draw may take (1 for token lengths a request needs, 0 for think times) */
  least: number;
}

type Parsed<T> = T | { error: string };

function isError<T>(v: Parsed<T>): v is { error: string } {
  return typeof v === 'object' && v !== null && 'error' in v;
}

/** One value: tokens `256`, `1.5K`; times `2s`, `500ms`, `0.25s` (whole ms). `whole`: no fraction allowed. */
function value(text: string, rules: DistributionRules, whole: boolean): Parsed<number> {
  const t = text.trim();
  if (rules.unit === 'time') {
    const m = /^(\d+(?:\.\d+)?)\s*(ms|s)$/i.exec(t);
    if (!m) {
      return { error: /^\d+(?:\.\d+)?$/.test(t) ? `"${t}" has no unit; write a time such as 2s or 500ms` : `"${t}" is not a time; write one such as 2s or 500ms` };
    }
    const exact = Number(m[1]) * (m[2]!.toLowerCase() === 's' ? 1000 : 1);
    // seconds times 1000 lands a hair off a whole ms in floating point ("0.007s" → 7.000000000000001)
    const ms = Math.abs(exact - Math.round(exact)) < 1e-6 ? Math.round(exact) : exact;
    if (!Number.isSafeInteger(ms)) return { error: `"${t}" is not a whole number of milliseconds; think times are held in ms, e.g. 1.5s or 250ms` };
    return ms;
  }
  const m = /^(\d+(?:\.\d+)?)\s*([kK])?$/.exec(t);
  const n = m ? Number(m[1]) * (m[2] ? 1024 : 1) : Number.NaN;
  if (!Number.isFinite(n)) return { error: `"${t}" is not a token count; write a whole number such as 256 or a K size such as 4K (K = 1024)` };
  if (whole && !Number.isSafeInteger(n)) return { error: `"${t}" is not a whole number of tokens; e.g. 256` };
  return n;
}

/** a bound or length: whole and at least `rules.least` */
function length(text: string, rules: DistributionRules): Parsed<number> {
  const v = value(text, rules, true);
  if (isError(v)) return v;
  if (v < rules.least) return { error: `"${text.trim()}" is below ${rules.least}, the least a ${rules.unit === 'time' ? 'think time' : 'length here'} may be` };
  return v;
}

function args(inner: string): string[] {
  return inner.split(',').map((a) => a.trim());
}

const FORMS_TOKENS = 'a fixed 256, uniform(128,512), normal(1024,256), normal(1024,256,64,2048) or hist(1-100:3;101-200:1)';
const FORMS_TIME = 'a fixed 2s, 500ms, uniform(1s,3s), normal(2s,500ms) or hist(1s-2s:3;5s:1)';

function uniform(parts: string[], rules: DistributionRules): Parsed<LengthDistribution> {
  if (parts.length !== 2) return { error: `uniform takes two values, min and max: uniform(${rules.unit === 'time' ? '1s,3s' : '128,512'})` };
  const min = length(parts[0]!, rules);
  if (isError(min)) return min;
  const max = length(parts[1]!, rules);
  if (isError(max)) return max;
  if (min > max) return { error: `uniform's min ${parts[0]} is above its max ${parts[1]}; write uniform(min,max)` };
  return { kind: 'uniform', min, max };
}

function normal(parts: string[], rules: DistributionRules): Parsed<LengthDistribution> {
  const eg = rules.unit === 'time' ? 'normal(2s,500ms) or normal(2s,500ms,0s,5s)' : 'normal(1024,256) or normal(1024,256,64,2048)';
  if (parts.length !== 2 && parts.length !== 4) return { error: `normal takes mean and sd, or mean, sd, min and max: ${eg}` };
  // think times are whole ms throughout, so their text round-trips exactly; token means and sds may have decimals
  const mean = value(parts[0]!, rules, rules.unit === 'time');
  if (isError(mean)) return mean;
  const sd = value(parts[1]!, rules, rules.unit === 'time');
  if (isError(sd)) return sd;
  let min = rules.least;
  let max = Math.round(mean + DEFAULTS.workload.normalMaxSds * sd);
  if (parts.length === 4) {
    const lo = length(parts[2]!, rules);
    if (isError(lo)) return lo;
    const hi = length(parts[3]!, rules);
    if (isError(hi)) return hi;
    [min, max] = [lo, hi];
  }
  if (min > max) return { error: `normal's clamps ${min} … ${max} are empty (min above max); ${eg}` };
  if (mean < min || mean > max) return { error: `normal's mean ${parts[0]} lies outside its clamps ${min} … ${max}; ${eg}` };
  return { kind: 'normal', mean, sd, min, max };
}

function histogram(inner: string, rules: DistributionRules): Parsed<LengthDistribution> {
  const eg = rules.unit === 'time' ? 'hist(1s-2s:3;5s:1)' : 'hist(1-100:3;101-200:1)';
  const bins: Array<{ min: number; max: number; weight: number }> = [];
  for (const raw of inner.split(';')) {
    const bin = raw.trim();
    const colon = bin.lastIndexOf(':');
    if (colon < 0) return { error: `histogram bin "${bin}" has no weight; write bins as min-max:weight separated by ";", e.g. ${eg}` };
    const range = bin.slice(0, colon);
    const weightText = bin.slice(colon + 1).trim();
    const weight = weightText === '' ? Number.NaN : Number(weightText);
    if (!Number.isFinite(weight) || weight <= 0) return { error: `histogram bin "${bin}": the weight must be a number above 0, e.g. ${eg}` };
    const dash = range.indexOf('-');
    const min = length(dash < 0 ? range : range.slice(0, dash), rules);
    if (isError(min)) return { error: `histogram bin "${bin}": ${min.error}` };
    const max = dash < 0 ? min : length(range.slice(dash + 1), rules);
    if (isError(max)) return { error: `histogram bin "${bin}": ${max.error}` };
    if (min > max) return { error: `histogram bin "${bin}": min is above max; e.g. ${eg}` };
    bins.push({ min, max, weight });
  }
  return { kind: 'histogram', bins };
}

/** Parses a distribution's text; a string error says what is wrong and the forms there are. */
export function parseDistribution(text: string, rules: DistributionRules): Parsed<LengthDistribution> {
  const t = text.trim();
  const forms = rules.unit === 'time' ? FORMS_TIME : FORMS_TOKENS;
  const m = /^([A-Za-z]+)\s*\((.*)\)$/s.exec(t);
  if (!m) {
    if (t === '') return { error: `no value; write ${forms}` };
    const v = length(t, rules);
    return isError(v) ? { error: `${v.error} (or a distribution: ${forms})` } : { kind: 'fixed', value: v };
  }
  const name = m[1]!.toLowerCase();
  if (name === 'uniform') return uniform(args(m[2]!), rules);
  if (name === 'normal') return normal(args(m[2]!), rules);
  if (name === 'hist' || name === 'histogram') return histogram(m[2]!, rules);
  return { error: `"${m[1]}" is not a distribution; write ${forms}` };
}
