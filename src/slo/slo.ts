/**
 * The service-level objective (SLO) a run answers capacity questions against: what each cell, and
 * each request in it, must meet. Written in the suite (`slo: { ttftMs: { p90: { max: 2000 } } }`)
 * or as LLM_BENCH_SLO="perRequest>=20,ttftP90<=2000,tbtP99<=100,errors=0,goodput>=90%". Both are
 * normalized to one `Slo` (the shape stored in the result), with a canonical text.
 *
 * The constraints, and what a cell's figure must do:
 *   perRequest[P10|P1] >= X   per-request tok/s: its median, or its low quantile (p10: 90 % of
 *                             requests at least this fast; 1000 / TBT p90 of the cell)
 *   ttft[P90|P99] <= Y        TTFT (ms): median, p90, p99
 *   tbt[P90|P99] <= Z         time between tokens (ms): median, p90, p99 of the per-request means
 *   itl[P90|P95|P99] <= W     inter-token latency (ms) over every gap of the cell: median, p90, p95, p99
 *   maxGapMs <= M             the cell's longest gap between two tokens of one request (ms)
 *   errors <= N  (or = N)     failed requests of the cell
 *   goodput >= G  (0.9 or 90%) share of the cell's requests that met the per-request constraints
 * ITL and the longest gap are the cell's (src/metrics/gaps.ts): goodput does not judge a request on them.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { Slo } from '../shapes/result.js';

export type { Slo };

const positive = z.number().positive();

/** `{ min }` (the median) or one quantile: `{ p10: { min } }` */
const minBound = z.union([
  z.strictObject({ min: positive }),
  z.strictObject({ median: z.strictObject({ min: positive }) }),
  z.strictObject({ p10: z.strictObject({ min: positive }) }),
  z.strictObject({ p1: z.strictObject({ min: positive }) }),
]);
/** `{ max }` (the median) or one quantile: `{ p90: { max } }` */
const maxBound = z.union([
  z.strictObject({ max: positive }),
  z.strictObject({ median: z.strictObject({ max: positive }) }),
  z.strictObject({ p90: z.strictObject({ max: positive }) }),
  z.strictObject({ p99: z.strictObject({ max: positive }) }),
]);

/** an ITL bound: `{ max }` (the median) or one quantile, p95 among them */
const itlBound = z.union([maxBound, z.strictObject({ p95: z.strictObject({ max: positive }) })]);

/** The suite's `slo` (validated by zod with the rest of the suite). */
export const SloSchema = z.strictObject({
  perRequestTokensPerSecond: minBound.optional(),
  ttftMs: maxBound.optional(),
  timeBetweenTokensMs: maxBound.optional(),
  interTokenLatencyMs: itlBound.optional(),
  maxGapMs: z.strictObject({ max: positive }).optional(),
  failedRequests: z.strictObject({ max: z.int().nonnegative() }).optional(),
  goodput: z.strictObject({ min: z.number().gt(0).max(1) }).optional(),
});
export type SloInput = z.input<typeof SloSchema>;

type MinStat = 'median' | 'p10' | 'p1';
type MaxStat = 'median' | 'p90' | 'p99';

function minOf(b: z.infer<typeof minBound>): { stat: MinStat; min: number } {
  if ('min' in b) return { stat: 'median', min: b.min };
  if ('median' in b) return { stat: 'median', min: b.median.min };
  if ('p10' in b) return { stat: 'p10', min: b.p10.min };
  return { stat: 'p1', min: b.p1.min };
}

function maxOf(b: z.infer<typeof maxBound>): { stat: MaxStat; max: number } {
  if ('max' in b) return { stat: 'median', max: b.max };
  if ('median' in b) return { stat: 'median', max: b.median.max };
  if ('p90' in b) return { stat: 'p90', max: b.p90.max };
  return { stat: 'p99', max: b.p99.max };
}

function itlOf(b: z.infer<typeof itlBound>): { stat: ItlStat; max: number } {
  return 'p95' in b ? { stat: 'p95', max: b.p95.max } : maxOf(b);
}

type ItlStat = MaxStat | 'p95';

const STAT_SUFFIX: Record<string, string> = { median: '', p10: 'P10', p1: 'P1', p90: 'P90', p95: 'P95', p99: 'P99' };

/** The canonical text of an SLO, in the LLM_BENCH_SLO grammar. */
export function sloText(slo: Omit<Slo, 'text'>): string {
  const parts: string[] = [];
  if (slo.perRequestTokensPerSecond) parts.push(`perRequest${STAT_SUFFIX[slo.perRequestTokensPerSecond.stat]}>=${slo.perRequestTokensPerSecond.min}`);
  if (slo.ttftMs) parts.push(`ttft${STAT_SUFFIX[slo.ttftMs.stat]}<=${slo.ttftMs.max}`);
  if (slo.timeBetweenTokensMs) parts.push(`tbt${STAT_SUFFIX[slo.timeBetweenTokensMs.stat]}<=${slo.timeBetweenTokensMs.max}`);
  if (slo.interTokenLatencyMs) parts.push(`itl${STAT_SUFFIX[slo.interTokenLatencyMs.stat]}<=${slo.interTokenLatencyMs.max}`);
  if (slo.maxGapMs) parts.push(`maxGapMs<=${slo.maxGapMs.max}`);
  if (slo.failedRequests) parts.push(`errors<=${slo.failedRequests.max}`);
  // the percentage to 12 significant digits: exact for any share written in the text or the suite
  if (slo.goodput) parts.push(`goodput>=${Number((slo.goodput.min * 100).toPrecision(12))}%`);
  return parts.join(',');
}

/** The suite's `slo` (already validated), normalized. */
export function sloFromInput(input: z.infer<typeof SloSchema>): Slo {
  const out: Omit<Slo, 'text'> = {};
  if (input.perRequestTokensPerSecond) out.perRequestTokensPerSecond = minOf(input.perRequestTokensPerSecond);
  if (input.ttftMs) out.ttftMs = maxOf(input.ttftMs);
  if (input.timeBetweenTokensMs) out.timeBetweenTokensMs = maxOf(input.timeBetweenTokensMs);
  if (input.interTokenLatencyMs) out.interTokenLatencyMs = itlOf(input.interTokenLatencyMs);
  if (input.maxGapMs) out.maxGapMs = { max: input.maxGapMs.max };
  if (input.failedRequests) out.failedRequests = { max: input.failedRequests.max };
  if (input.goodput) out.goodput = { min: input.goodput.min };
  if (Object.keys(out).length === 0) throw new ConfigError('slo: names no constraint; e.g. slo: { perRequestTokensPerSecond: { min: 20 }, ttftMs: { p90: { max: 2000 } } }');
  return { ...out, text: sloText(out) };
}

const EXAMPLE = 'LLM_BENCH_SLO="perRequest>=20,ttftP90<=2000,tbtP99<=100,errors=0"';
const FIGURES = 'perRequest, perRequestP10, perRequestP1 (>=); ttft, ttftP90, ttftP99, tbt, tbtP90, tbtP99, itl, itlP90, itlP95, itlP99, maxGapMs (<=); errors (<= or =); goodput (>=, 0.9 or 90%)';

/** LLM_BENCH_SLO, parsed; every mistake names the part, the rule and an example. */
/** the SLO part written without its unit: 2s → 2000 (milliseconds), 40tok/s → 40 */
function unitFree([, figure, op, raw, unit]: RegExpExecArray): string {
  const seconds = /^s(ec(onds?)?)?$/i.test(unit!) ? Number(raw) * 1000 : undefined;
  return `${figure}${op}${seconds !== undefined && Number.isFinite(seconds) ? Math.round(seconds * 1000) / 1000 : raw}`;
}

export function parseSloText(text: string, name = 'LLM_BENCH_SLO'): Slo {
  const out: Omit<Slo, 'text'> = {};
  const parts = text.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0) throw new ConfigError(`${name} is empty; e.g. ${EXAMPLE}`);
  for (const part of parts) {
    const m = /^([A-Za-z0-9]+)\s*(>=|<=|=)\s*([0-9.]+)\s*(%?)$/.exec(part);
    if (!m) {
      const negative = /^[A-Za-z0-9]+\s*(>=|<=|=)\s*-/.test(part);
      const unit = /^([A-Za-z0-9]+)\s*(>=|<=|=)\s*([0-9.]+)\s*([A-Za-z/]+)$/.exec(part);
      if (!negative && unit) throw new ConfigError(`${name}: "${part}": give the number without a unit ("${unit[4]}"); times are in milliseconds and rates in tok/s, e.g. ${unitFree(unit)}`);
      throw new ConfigError(`${name}: "${part}" ${negative ? 'has a negative number; every SLO figure is 0 or more' : 'is not <figure><op><number>'}; e.g. ${EXAMPLE}`);
    }
    const [, figure, op, raw, percent] = m as unknown as [string, string, string, string, string];
    // a percentage read as the decimal it is (99.9% is 0.999, where 99.9 / 100 is 0.9990000000000001)
    const value = Number(percent ? `${raw}e-2` : raw);
    if (!Number.isFinite(value)) throw new ConfigError(`${name}: "${part}": ${raw} is not a number; e.g. ${EXAMPLE}`);
    const key = figure.toLowerCase();
    if (percent && key !== 'goodput') throw new ConfigError(`${name}: "${part}": only goodput takes a percentage; e.g. ${EXAMPLE}`);
    const needs = (want: string): void => {
      if (op !== want) throw new ConfigError(`${name}: "${part}": ${figure} takes ${want} (it is a ${want === '>=' ? 'minimum' : 'maximum'}); e.g. ${figure}${want}${raw}`);
    };
    const positiveValue = (what: string, atZero: string): void => {
      if (!(value > 0)) throw new ConfigError(`${name}: "${part}": ${what} must be above 0, or ${atZero}; e.g. ${EXAMPLE}`);
    };
    const minStat: Record<string, MinStat> = { perrequest: 'median', perrequestp50: 'median', perrequestp10: 'p10', perrequestp1: 'p1' };
    const maxStat: Record<string, MaxStat> = { '': 'median', p50: 'median', p90: 'p90', p99: 'p99' };
    if (key in minStat) {
      needs('>=');
      positiveValue('a per-request tok/s minimum', 'every cell meets it');
      if (out.perRequestTokensPerSecond) throw new ConfigError(`${name}: per-request tok/s is given twice ("${part}"); keep one`);
      out.perRequestTokensPerSecond = { stat: minStat[key]!, min: value };
    } else if (/^(ttft|tbt)(p50|p90|p99)?$/.test(key)) {
      needs('<=');
      const ttft = key.startsWith('ttft');
      positiveValue(ttft ? 'a TTFT maximum' : 'a time-between-tokens maximum', 'no cell can meet it');
      const stat = maxStat[key.slice(ttft ? 4 : 3)]!;
      if (ttft) {
        if (out.ttftMs) throw new ConfigError(`${name}: TTFT is given twice ("${part}"); keep one`);
        out.ttftMs = { stat, max: value };
      } else {
        if (out.timeBetweenTokensMs) throw new ConfigError(`${name}: time between tokens is given twice ("${part}"); keep one`);
        out.timeBetweenTokensMs = { stat, max: value };
      }
    } else if (/^itl(p50|p90|p95|p99)?$/.test(key)) {
      needs('<=');
      positiveValue('an inter-token latency maximum', 'no cell can meet it');
      if (out.interTokenLatencyMs) throw new ConfigError(`${name}: inter-token latency is given twice ("${part}"); keep one`);
      out.interTokenLatencyMs = { stat: key === 'itlp95' ? 'p95' : maxStat[key.slice(3)]!, max: value };
    } else if (key === 'maxgapms' || key === 'maxgap') {
      needs('<=');
      positiveValue('a longest-gap maximum', 'no cell can meet it');
      if (out.maxGapMs) throw new ConfigError(`${name}: the longest gap is given twice ("${part}"); keep one`);
      out.maxGapMs = { max: value };
    } else if (key === 'errors') {
      if (op === '>=') throw new ConfigError(`${name}: "${part}": errors takes <= or = (a maximum); e.g. errors=0`);
      if (!Number.isInteger(value) || value < 0) throw new ConfigError(`${name}: "${part}": errors is a count of failed requests (0, 1, …); e.g. errors=0`);
      if (out.failedRequests) throw new ConfigError(`${name}: errors is given twice ("${part}"); keep one`);
      out.failedRequests = { max: value };
    } else if (key === 'goodput') {
      needs('>=');
      if (!(value > 0 && value <= 1)) throw new ConfigError(`${name}: "${part}": goodput is a share of requests above 0 and at most 1 (or 100%); e.g. goodput>=90%`);
      if (out.goodput) throw new ConfigError(`${name}: goodput is given twice ("${part}"); keep one`);
      out.goodput = { min: value };
    } else {
      throw new ConfigError(`${name}: "${figure}" is not an SLO figure; use ${FIGURES}; e.g. ${EXAMPLE}`);
    }
  }
  return { ...out, text: sloText(out) };
}

/** Per-request constraints: the ones each request of a cell is judged on (goodput). */
export function hasPerRequestConstraints(slo: Slo): boolean {
  return slo.perRequestTokensPerSecond !== undefined || slo.ttftMs !== undefined || slo.timeBetweenTokensMs !== undefined;
}
