/**
 * Pure: the HTML report's "Open-loop load" section (only when the result has rate cells) and the
 * latency-against-rate charts it shares with the comparison page: the same grid, knee, legend and
 * measurements as the Markdown page (src/pages/rate-markdown.ts, words from the view model), and
 * TTFT p90 and end-to-end p99, both from the scheduled time, against the offered rate, one line
 * per context (per run and context when several runs are overlaid), each context's knee (its
 * first Saturated rate) ringed and labelled.
 */
import { contextLabel, rateCellKey } from '../shapes/labels.js';
import { formatMs } from '../text/format.js';
import { escapeHtml } from '../text/escape.js';
import type { RateCellResult, RateCellStatus, SpeedMatrixResult } from '../shapes/result.js';
import { table } from './html-frame.js';
import { runContextStyle } from './chart-style.js';
import { lineChart, type Series } from './svg.js';
import { kneeText, RATE_MEASUREMENTS_COLUMNS, RATE_TABLE_NOTE, rateGridFigures, rateMeasurementRow, SEARCHED_RATE_COLUMNS, searchedRateCells, searchedRateRow } from './rate-rows.js';
import { offeredRateSpreadNote, rateCapacityLines, rateCellMap, rateLegendLine, SEARCHED_RATE_CELLS_HEAD } from './rate-markdown.js';
import { clientLimited, configuredRateCells, GOODPUT_COLUMN, goodputText, hollowNote, kneeRates, missingRateText, notPlannedRate, RATE_SECTION, rateAxes, rowsAreText, rateSettingsText, rateStatusWords, rateText, SATURATION_NOT_JUDGED_HEAD, saturationNotJudgedLines, sweepGridNote } from './view.js';
import { appendAll } from '../extent.js';

/** Status fills of the rate cells: the decode statuses' hues where the meaning is alike (Saturated as Requests queued). */
export const RATE_STATUS_COLORS: Record<RateCellStatus, { fill: string; text: string }> = {
  valid: { fill: '#009E73', text: '#fff' },
  saturated: { fill: '#E69F00', text: '#000' },
  'over-capacity': { fill: '#BBBBBB', text: '#000' },
  'client-limited': { fill: '#56B4E9', text: '#000' },
  errors: { fill: '#D55E00', text: '#fff' },
  'not-run': { fill: '#FFFFFF', text: '#000' },
};

/** One run's rate cells, as the charts draw them; `label` names the run when several are overlaid. */
export interface RateChartRun {
  label?: string;
  cells: readonly RateCellResult[];
}

/**
 * TTFT p90 and end-to-end p99 from the scheduled time against the offered rate (log 2, ticked at
 * the rates), on log y axes. One run: colour is the context; several: colour is the run, line
 * style the context. [] when no run has a measured rate cell.
 */
export function rateCharts(runs: readonly RateChartRun[]): string[] {
  const measured = runs.flatMap((r) => r.cells.filter((c) => c.figures));
  if (measured.length === 0) return [];
  const contexts = [...new Set(measured.map((c) => c.context))].sort((a, b) => a - b);
  const rates = [...new Set(measured.map((c) => c.rate))].sort((a, b) => a - b);
  const several = runs.length > 1;
  const { style, legend } = runContextStyle(runs, contexts);
  const kneesOf = runs.map((r) => kneeRates(r.cells));
  const series = (pick: (c: RateCellResult) => number | undefined, what: string): Series[] =>
    runs.flatMap((run, i) =>
      contexts.map((context, j): Series => {
        const ctx = contextLabel(context);
        const prefix = several ? `${run.label}, ` : '';
        const knee = kneesOf[i]!.get(context);
        return {
          name: several ? `${run.label} · ${ctx}` : `context ${ctx}`,
          ...style(i, j),
          data: several ? { run: String(i), context: ctx } : { context: ctx },
          points: run.cells
            .filter((c) => c.context === context && c.figures)
            .sort((a, b) => a.rate - b.rate)
            .map((c) => ({
              x: c.rate,
              y: pick(c),
              title: `${prefix}${rateCellKey(c.context, c.rate)}: ${what} ${formatMs(pick(c))} (${rateStatusWords(c)})`,
              ...(clientLimited(c) ? { hollow: true } : {}),
              ...(c.rate === knee ? { knee: `knee ${ctx} ${rateText(c.rate)}/s` } : {}),
            })),
        };
      }),
    );
  const knees = runs
    .map((r, i) => ({ label: several ? `${r.label}: ` : '', text: kneeText(kneesOf[i]!) }))
    .filter((k) => k.text !== '')
    .map((k) => `${k.label}${k.text}`);
  const unjudged = measured.filter((c) => c.evidence.saturation?.notJudged !== undefined).length;
  const unjudgedNote = unjudged > 0 ? ` Saturated was not judged in ${unjudged} of ${measured.length} measured rate cell${measured.length === 1 ? '' : 's'}.` : '';
  const kneeNote =
    knees.length > 0
      ? ` Ringed: the knee, each context's first Saturated rate (${knees.join('; ')}).${unjudgedNote}`
      : unjudged > 0
        ? ` No rate judged was Saturated.${unjudgedNote}`
        : ' No rate was Saturated.';
  const how = `${hollowNote(measured)}${several ? ' Colour is the run, line style the context.' : ''}`;
  const x = { title: 'Offered rate (requests/s, log scale)', log: true, base: 2, ticks: rates };
  return [
    lineChart({
      name: 'rateTtft',
      title: 'TTFT p90 against the rate (from the scheduled time)',
      description: `The 90th percentile of time to first token, measured from each request's scheduled time, on a log scale; one line per context.${kneeNote}${how}`,
      x,
      y: { title: 'TTFT p90 (ms, log scale)', log: true },
      legend,
      series: series((c) => c.figures?.ttftFromScheduleMs?.p90, 'TTFT p90'),
    }),
    lineChart({
      name: 'rateE2e',
      title: 'End-to-end p99 against the rate (from the scheduled time)',
      description: `The 99th percentile of end-to-end latency, measured from each request's scheduled time, on a log scale; one line per context.${kneeNote}${how}`,
      x,
      y: { title: 'End-to-end p99 (ms, log scale)', log: true },
      legend,
      series: series((c) => c.figures?.e2eFromScheduleMs?.p99, 'end-to-end p99'),
    }),
  ];
}

/** A status badge: the rate cell's words on its status colour. */
function badge(cell: RateCellResult): string {
  const color = RATE_STATUS_COLORS[cell.status];
  return `<span class="status" style="background:${color.fill};color:${color.text}">${escapeHtml(rateStatusWords(cell))}</span>`;
}

/** The whole section; '' without rate cells (the report stays as it was). */
export function rateSectionHtml(result: SpeedMatrixResult): string {
  const all = configuredRateCells(result);
  if (all.length === 0) return '';
  const cells = rateCellMap(all);
  const { contexts, rates } = rateAxes(result);
  const missing = missingRateText(result);
  const how = rateSettingsText(result);
  const out: string[] = [`<h2>${escapeHtml(RATE_SECTION)}</h2>`];
  out.push(`<p>Status · completed req/s${result.info.run.slo ? ' · goodput at the SLO' : ''} · ${escapeHtml(rowsAreText(result))}, columns are offered rates in requests/s${how ? ` (${escapeHtml(how)})` : ''}${escapeHtml(sweepGridNote(result))}.</p>`);
  // the grid: each cell's badge carries its status words, then its completed rate and goodput
  const grid = contexts.map((context) => [
    escapeHtml(contextLabel(context)),
    ...rates.map((rate) => {
      const cell = cells.get(rateCellKey(context, rate));
      if (!cell) return escapeHtml(missing(context));
      return [badge(cell), ...rateGridFigures(cell).map(escapeHtml)].join(' · ');
    }),
  ]);
  out.push(`<div data-grid="rate">${table(['Context', ...rates.map((r) => `${rateText(r)}/s`)], grid, rates.map((_, i) => i + 1))}</div>`);
  const knees = kneeRates(all);
  if (knees.size > 0) out.push(`<p>Knee (the first Saturated rate of each context): ${escapeHtml(kneeText(knees))}.</p>`);
  const capacity = rateCapacityLines(result);
  if (capacity.length > 0) out.push(`<ul data-list="rate-capacity">${capacity.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>`);
  const spread = capacity.length > 0 ? offeredRateSpreadNote(result) : undefined;
  if (spread) out.push(`<p>${escapeHtml(spread)}</p>`);
  const legend = rateLegendLine(new Set(all.flatMap((c) => [c.status, ...c.statuses])));
  if (legend) out.push(`<p>${escapeHtml(legend)}</p>`);
  const charts = rateCharts([{ cells: all }]);
  if (charts.length > 0) appendAll(out, ['<div class="charts">', ...charts, '</div>']);

  const showGoodput = result.info.run.slo !== undefined;
  const notPlanned = notPlannedRate(result);
  const rows = contexts.flatMap((context) =>
    rates.flatMap((rate) => {
      const cell = cells.get(rateCellKey(context, rate));
      if (!cell && notPlanned(context)) return [];
      const row = rateMeasurementRow(context, rate, cell, missing(context)).map((x) => escapeHtml(x));
      if (cell) row[2] = badge(cell);
      if (showGoodput) row.push(escapeHtml(goodputText(cell)));
      return [row];
    }),
  );
  out.push(`<div data-table="rate">${table([...RATE_MEASUREMENTS_COLUMNS, ...(showGoodput ? [GOODPUT_COLUMN] : [])], rows, [0, 2])}</div>`);
  out.push(`<p>${escapeHtml(RATE_TABLE_NOTE)}</p>`);
  const searched = searchedRateCells(result);
  if (searched.length > 0) {
    const searchedRows = searched.map((c) => {
      const row = searchedRateRow(c).map((x) => escapeHtml(x));
      row[2] = badge(c);
      return row;
    });
    out.push(`<p>${escapeHtml(SEARCHED_RATE_CELLS_HEAD)}:</p>`, `<div data-table="rate-searched">${table([...SEARCHED_RATE_COLUMNS], searchedRows, [0, 2])}</div>`);
  }
  const notJudged = saturationNotJudgedLines(all);
  if (notJudged.length > 0) out.push(`<p>${escapeHtml(SATURATION_NOT_JUDGED_HEAD)}</p>`, `<ul data-list="saturation-not-judged">${notJudged.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>`);
  return out.join('\n');
}
