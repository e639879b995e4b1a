/**
 * Pure: the Markdown page's "Open-loop load" section (only when the result has rate cells): the
 * context × rate grid of statuses and goodput, the knee of each context (its first Saturated
 * rate), the legend of the rate statuses seen, then the measurements of each rate cell. Words from
 * the view model (src/pages/view.ts), figures from src/pages/rate-rows.ts, escaped for Markdown.
 */
import { contextLabel, rateCellKey } from '../shapes/labels.js';
import { codeSpan, escapeLine, escapeText, markdownRow } from '../text/escape.js';
import type { RateCapacityRow, RateCellResult, RateCellStatus, SpeedMatrixResult } from '../shapes/result.js';
import { describeRateCapacity } from '../text/capacity-line.js';
import { rateClientLimitedWhy } from '../judge/judge-rate.js';
import { kneeText, RATE_MEASUREMENTS_COLUMNS, RATE_TABLE_NOTE, rateGridText, rateMeasurementRow, SEARCHED_RATE_COLUMNS, searchedRateCells, searchedRateRow } from './rate-rows.js';
import { configuredRateCells, GOODPUT_COLUMN, goodputText, kneeRates, missingRateText, notPlannedRate, RATE_SECTION, RATE_STATUS_LABELS, RATE_STATUS_LEGEND, rateAxes, rowsAreText, rateSettingsText, rateText, SATURATION_NOT_JUDGED_HEAD, saturationNotJudgedLines, sweepGridNote } from './view.js';
import { appendAll, minOf } from '../extent.js';

/** The legend of the rate statuses among `seen`, one paragraph; undefined when only Valid was seen. */
export function rateLegendLine(seen: ReadonlySet<RateCellStatus>): string | undefined {
  const parts = RATE_STATUS_LEGEND.filter(([s]) => seen.has(s)).map(([s, text]) => `${RATE_STATUS_LABELS[s]}: ${text}`);
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/** The rate cells by key (8K@2). */
export function rateCellMap(cells: readonly RateCellResult[]): Map<string, RateCellResult> {
  return new Map(cells.map((c) => [rateCellKey(c.context, c.rate), c]));
}

/** The grid: its caption, a blank line, then the table (status · completed req/s · goodput per cell). */
export function rateGrid(result: SpeedMatrixResult): string[] {
  const cells = rateCellMap(configuredRateCells(result));
  const { contexts, rates } = rateAxes(result);
  const missing = missingRateText(result);
  const how = rateSettingsText(result);
  const goodput = result.info.run.slo ? ' · goodput at the SLO' : '';
  return [
    `Status · completed req/s${goodput} · ${escapeText(rowsAreText(result))}, columns are offered rates in requests/s${how ? ` (${escapeText(how)})` : ''}${escapeText(sweepGridNote(result))}.`,
    '',
    markdownRow(['Context', ...rates.map((r) => `${rateText(r)}/s`)]),
    markdownRow(['---', ...rates.map(() => '---')]),
    ...contexts.map((context) => markdownRow([contextLabel(context), ...rates.map((r) => escapeText(rateGridText(cells.get(rateCellKey(context, r)), missing(context))))])),
  ];
}

/** Per context searched, "Highest rate at the SLO: 8K: 11.2 req/s (binds: … at 12.4 req/s)"; [] without rate capacity rows. */
export function rateCapacityLines(result: Pick<SpeedMatrixResult, 'rateCapacity'>): string[] {
  return (result.rateCapacity?.rows ?? []).map((r: RateCapacityRow) => `Highest rate at the SLO: ${describeRateCapacity(r)}`);
}

/** How the highest rate at the SLO was found, one sentence (plain text: callers escape or code-span). */
export function rateCapacityNote(result: Pick<SpeedMatrixResult, 'rateCapacity' | 'info'> & Partial<Pick<SpeedMatrixResult, 'rateCells'>>): string {
  const cells = (result.rateCapacity?.rows ?? []).reduce((n, r) => n + r.adaptiveCells, 0);
  if (cells === 0) return `The highest rate at the SLO (${codeSpan(result.info.run.slo?.text ?? '')}) comes from the configured rates alone (no rate cell was searched between them); a Saturated rate never meets the SLO.`;
  const spread = offeredRateSpreadNote(result);
  const listed = searchedRateCells(result).length > 0;
  return (
    `The highest rate at the SLO (${codeSpan(result.info.run.slo?.text ?? '')}) is found by bisection between the configured rates until the gap is within 5 % of the passing rate, ` +
    `then measured once more (${cells} rate cell${cells === 1 ? '' : 's'} searched, the confirming one included${listed ? "; the search's own cells, less the confirming one, are listed below the measurements" : ''}); a Saturated rate never meets the SLO.${spread ? ` ${spread}` : ''}`
  );
}

/**
 * Where a random schedule's offered rate varies more in one window than the search's 5 % steps: one
 * standard deviation of the count of arrivals, relative, at the lowest rate found (Poisson: 1/√(rate × window);
 * gamma with burstiness B: 1/√(B × rate × window)); undefined for constant arrivals or where it is within 5 %.
 */
export function offeredRateSpreadNote(result: Pick<SpeedMatrixResult, 'rateCapacity' | 'info'> & Partial<Pick<SpeedMatrixResult, 'rateCells'>>): string | undefined {
  // only where the search stepped: the steps are what the spread is weighed against
  if ((result.rateCapacity?.rows ?? []).every((r) => r.adaptiveCells === 0)) return undefined;
  const arrival = result.info.run.rates?.arrival ?? 'poisson';
  const burstiness = arrival === 'poisson' ? 1 : arrival.startsWith('gamma:') ? Number(arrival.slice('gamma:'.length)) : undefined;
  const found = (result.rateCapacity?.rows ?? []).filter((r) => r.capacity > 0).map((r) => r.capacity);
  if (burstiness === undefined || !(burstiness > 0) || found.length === 0) return undefined;
  const rate = minOf(found);
  const windowS = result.info.run.windowS;
  const spread = 1 / Math.sqrt(burstiness * rate * windowS);
  if (spread <= 0.05) return undefined;
  return (
    `In a ${windowS} s window a ${arrival} schedule at ${rateText(rate)} req/s offers about ±${Math.round(spread * 100)} % of its rate (one standard deviation), more than the search's 5 % steps` +
    `${searchedRateCells(result).length > 0 ? ": compare each searched cell's offered rate below" : ''}; a longer window (LLM_BENCH_DURATION_S) narrows it.`
  );
}

/** The words above the search's own rate cells, on both pages. */
export const SEARCHED_RATE_CELLS_HEAD = "The highest-rate search's own rate cells (its confirming measurement at the rate found is kept as the row's verdict, not listed)";

/** The capacity search's own rate cells, measured like the configured ones, with the SLO verdict: [] when none. */
function searchedRateTable(result: SpeedMatrixResult): string[] {
  const searched = searchedRateCells(result);
  if (searched.length === 0) return [];
  // the verdict is our own line (it carries a '>' as written), the figures escaped as every cell's
  const rows = searched.map((c) => searchedRateRow(c)).map((r) => markdownRow([...r.slice(0, -1).map(escapeText), escapeLine(r[r.length - 1]!)]));
  return [`${SEARCHED_RATE_CELLS_HEAD}:`, '', markdownRow([...SEARCHED_RATE_COLUMNS]), markdownRow(SEARCHED_RATE_COLUMNS.map(() => '---')), ...rows, ''];
}

/** The whole section; [] without rate cells (the page stays as it was). */
export function rateSection(result: SpeedMatrixResult): string[] {
  const all = configuredRateCells(result);
  if (all.length === 0) return [];
  const out: string[] = [`### ${RATE_SECTION}`, '', ...rateGrid(result), ''];
  const knees = kneeRates(all);
  if (knees.size > 0) out.push(`Knee (the first Saturated rate of each context): ${kneeText(knees)}.`, '');
  const lines = rateCapacityLines(result);
  if (lines.length > 0) appendAll(out, [...lines.map((l) => `- ${escapeLine(l)}`), '', rateCapacityNote(result), '']);
  const seen = new Set<RateCellStatus>(all.flatMap((c) => [c.status, ...c.statuses]));
  const legend = rateLegendLine(seen);
  if (legend) out.push(legend, '');

  const showGoodput = result.info.run.slo !== undefined;
  const columns: string[] = [...RATE_MEASUREMENTS_COLUMNS, ...(showGoodput ? [GOODPUT_COLUMN] : [])];
  const cells = rateCellMap(all);
  const { contexts, rates } = rateAxes(result);
  const missing = missingRateText(result);
  const notPlanned = notPlannedRate(result);
  out.push(markdownRow(columns), markdownRow(columns.map(() => '---')));
  for (const context of contexts) {
    for (const rate of rates) {
      const cell = cells.get(rateCellKey(context, rate));
      if (!cell && notPlanned(context)) continue;
      out.push(markdownRow([...rateMeasurementRow(context, rate, cell, missing(context)).map(escapeText), ...(showGoodput ? [goodputText(cell)] : [])]));
    }
  }
  out.push('');
  out.push(escapeText(RATE_TABLE_NOTE), '');
  if (showGoodput) out.push(`${GOODPUT_COLUMN}: the share of the rate cell's requests that met the SLO's per-request constraints (${codeSpan(result.info.run.slo!.text)}); a failed request never meets.`, '');
  appendAll(out, searchedRateTable(result));
  appendAll(out, rateClientLimitedNotes(all));
  const notJudged = saturationNotJudgedLines(all);
  if (notJudged.length > 0) appendAll(out, [SATURATION_NOT_JUDGED_HEAD, '', ...notJudged.map((l) => `- ${escapeText(l)}`), '']);
  return out;
}

/** Rate cells marked Client-limited, each with the rules that marked it and their fixes (judge-rate.ts rateClientLimitedWhy). */
function rateClientLimitedNotes(cells: readonly RateCellResult[]): string[] {
  const flagged = cells.filter((c) => c.statuses.includes('client-limited'));
  if (flagged.length === 0) return [];
  const line = (c: RateCellResult): string => {
    const { why, fix } = rateClientLimitedWhy(c.evidence.clientLimited, c.clientCpu);
    return `- ${rateCellKey(c.context, c.rate)}/s: ${escapeText(why)}. What to do: ${escapeText(fix)}.`;
  };
  return ["Client-limited rate cells: the load generator could not keep their schedule or time their tokens, so their latencies from the schedule are partly the client's:", '', ...flagged.map(line), ''];
}
