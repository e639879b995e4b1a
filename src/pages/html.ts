/**
 * Pure: SpeedMatrixResult → speed-matrix.html, one self-contained file (charts drawn here as SVG,
 * styles inline, no script, no request). The same figures as the Markdown page
 * (src/pages/markdown.ts), drawn: the decode grid as a heat map of statuses (each cell links to
 * its detail view), total and per-request tok/s and TTFT against requests at once, the Pareto
 * trade-off of per-request against total tok/s, prefill against context, capacity at the SLO, and
 * per cell its figures, spread, evidence, cross-check, server metrics over the window and the
 * distribution of its requests' time between tokens; with rate cells, the Open-loop load section
 * (src/pages/rate-html.ts).
 */
import { cellKey, contextLabel, parseContext } from '../shapes/labels.js';
import { cutText, formatMs, formatNumber, formatPrefillRate, formatRate, HEADING_MAX_CHARS } from '../text/format.js';
import { plannedPrefillKeys } from '../results/collect.js';
import { cellMeasurementRow, extraColumnsOf, extraColumnTexts, extraColumnTitles } from './markdown-rows.js';
import { ALL_MEASUREMENTS_COLUMNS, capacityGoodputText, clientLimited, goodputText, gridAxes, hollowNote, longGapLines, matrixCells, missingText, STATUS_LABELS, rowsAreText, runWorkload, statusWords, ttftNote, workloadOverCapacityNote } from './view.js';
import type { CellResult, PrefillRowResult, SpeedMatrixResult } from '../shapes/result.js';
import { bindingText, capacityUsersText } from '../text/capacity-line.js';
import { htmlPage, infoSections, MISSING_COLOR, STATUS_COLORS, STATUS_ORDER, table } from './html-frame.js';
import { escapeHtml } from '../text/escape.js';
import { rateSectionHtml } from './rate-html.js';
import { workloadSectionHtml } from './workload-rows.js';
import { runContextStyle } from './chart-style.js';
import { heatMap, lineChart, PALETTE, type Axis, type HeatCell, type Series } from './svg.js';
import { appendAll } from '../extent.js';
import { cellAnchor, cellDetail } from './cell-html.js';

export { cellAnchor };

/** a concurrency axis: log 2, ticked at the matrix's columns */
export function concurrencyAxis(levels: readonly number[]): Axis {
  return { title: 'Requests at once', log: true, base: 2, ticks: [...levels] };
}

export function contextAxis(contexts: readonly number[]): Axis {
  return { title: 'Context (tokens)', ticks: [...contexts], format: contextLabel };
}

export function renderHtml(full: SpeedMatrixResult): string {
  const result: SpeedMatrixResult = { ...full, cells: matrixCells(full) };
  const { info } = result;
  const { contexts, levels } = gridAxes(result);
  const cells = new Map(result.cells.map((c) => [cellKey(c.context, c.concurrency), c]));
  const body: string[] = ['<h1>Speed test matrix</h1>'];
  if (info.simulated) body.push(`<p class="note">The server was the embedded simulated server${info.simProfile ? ` (profile ${escapeHtml(info.simProfile)})` : ''}; these figures are not from real hardware.</p>`);
  if (result.partial) body.push('<p class="note"><strong>Partial</strong>: written after the last finished cell; the run is still going, or it was stopped before the rest.</p>');
  else if (result.incomplete) body.push(`<p class="note"><strong>Incomplete</strong>: ${result.incomplete.notRun.length} cells could not start, ${result.incomplete.missing.length} were not run.</p>`);
  // a name of any length: cut with an ellipsis, the whole in the tooltip (and the JSON)
  body.push(`<h2 title="${escapeHtml(info.title)}">${escapeHtml(cutText(info.title, HEADING_MAX_CHARS))}</h2>`, infoSections(result));

  body.push('<h2>Sustained decode</h2>', decodeHeatMap(result, contexts, levels, cells));
  const overCapacity = workloadOverCapacityNote(result);
  if (overCapacity) body.push(`<p>${escapeHtml(overCapacity)}</p>`);
  appendAll(body, [`<p>${escapeHtml(ttftNote(result))}</p>`, '<div class="charts">', ...decodeCharts([{ cells: result.cells }], contexts, levels), '</div>']);
  const rates = rateSectionHtml(full);
  if (rates !== '') body.push(rates);
  const workload = workloadSectionHtml(full);
  if (workload !== '') body.push(workload);

  const prefill = prefillCharts([{ name: 'prefill', rows: result.prefill }]);
  if (prefill.length > 0) appendAll(body, ['<h2>Prefill</h2>', '<div class="charts">', ...prefill, '</div>', prefillTable(result)]);

  if (info.run.slo) body.push(capacityHtml(full));
  body.push('<h2>All measurements</h2>', measurementsTable(result, contexts, levels, cells));
  const [stallHead, ...stalls] = longGapLines(result.cells);
  if (stallHead !== undefined) body.push(`<p class="note">${escapeHtml(stallHead)}</p>`, `<ul>${stalls.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>`);
  body.push('<h2>Cells</h2>', '<p>Select a cell in the heat map to see its details here.</p>');
  for (const cell of result.cells) body.push(cellDetail(cell, info.run.percentiles));
  for (const cell of full.cells.filter((c) => c.adaptive)) body.push(cellDetail(cell, info.run.percentiles));
  const failures = [...result.prefill, ...result.cells, ...(full.capacity?.rows ?? []), ...(full.rateCells ?? []), ...(full.rateCapacity?.rows ?? [])].flatMap((x) => x.thresholdFailures ?? []);
  if (failures.length > 0) body.push('<h2>Threshold failures</h2>', `<ul>${failures.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>`);
  const regressions = [...result.prefill, ...result.cells, ...(full.capacity?.rows ?? []), ...(full.rateCells ?? []), ...(full.rateCapacity?.rows ?? [])].flatMap((x) => x.baselineFailures ?? []);
  if (regressions.length > 0) body.push('<h2>Regressions against the baseline</h2>', `<ul>${regressions.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>`);
  return htmlPage(`Speed matrix: ${cutText(info.title, HEADING_MAX_CHARS)}`, body.join('\n'));
}

function decodeHeatMap(result: SpeedMatrixResult, contexts: number[], levels: number[], cells: Map<string, CellResult>): string {
  const missing = missingText(result);
  const heat = contexts.flatMap((context, row) =>
    levels.map((c, col): HeatCell => {
      const cell = cells.get(cellKey(context, c));
      const key = cellKey(context, c);
      if (!cell) return { row, col, fill: MISSING_COLOR.fill, textColor: MISSING_COLOR.text, text: missing, title: `${key}: ${missing}`, data: { cell: key } };
      const color = STATUS_COLORS[cell.status];
      const f = cell.figures;
      const figures = f ? ` · ${formatRate(f.totalTokensPerSecond)} tok/s total · ${formatRate(f.perRequestTokensPerSecond)} tok/s per request · TTFT ${formatMs(f.ttftMs?.median)}` : '';
      return {
        row,
        col,
        fill: color.fill,
        textColor: color.text,
        text: f ? formatRate(f.totalTokensPerSecond) : STATUS_LABELS[cell.status],
        title: `${key}: ${statusWords(cell)}${figures} (select for details)`,
        href: `#${cellAnchor(context, c)}`,
        data: { cell: key, status: cell.status },
      };
    }),
  );
  const seen = new Set(result.cells.map((c) => c.status));
  // a workload's one row is not a context length (view.ts rowsAreText)
  const workload = runWorkload(result.info) !== undefined;
  return heatMap({
    name: 'heatmap',
    title: workload ? "Total tok/s by the workload's row and requests at once" : 'Total tok/s by context and requests at once',
    description: `${workload ? `${upperFirst(rowsAreText(result))}. ` : ''}Each cell is coloured by its status and shows its total tok/s; select a cell for its details.`,
    rows: contexts.map(contextLabel),
    cols: levels.map(String),
    rowTitle: workload ? 'Workload' : 'Context (tokens)',
    colTitle: 'Requests at once',
    cells: heat,
    legend: STATUS_ORDER.filter((s) => seen.has(s)).map((s) => ({ name: STATUS_LABELS[s], color: STATUS_COLORS[s].fill, box: true })),
  });
}

/** One run's measured cells, as the decode charts draw them; `label` names the run when several are overlaid. */
export interface ChartRun {
  label?: string;
  cells: readonly CellResult[];
}

/**
 * Total and per-request tok/s, the Pareto and TTFT against requests at once, one series per run
 * and context. One run (the report): colour is the context. Several (the comparison): colour is
 * the run, line style the context.
 */
export function decodeCharts(runs: readonly ChartRun[], contexts: readonly number[], levels: readonly number[]): string[] {
  const several = runs.length > 1;
  const { style, legend } = runContextStyle(runs, contexts);
  /** one series per run and context: its measured cells, in order of concurrency */
  const series = (point: (c: CellResult) => { x?: number; y?: number; label?: string }, what: (c: CellResult) => string): Series[] =>
    runs.flatMap((run, i) =>
      contexts.map((context, j): Series => {
        const ctx = contextLabel(context);
        const prefix = several ? `${run.label}, ` : '';
        return {
          name: several ? `${run.label} · ${ctx}` : `context ${ctx}`,
          ...style(i, j),
          data: several ? { run: String(i), context: ctx } : ({ context: ctx } as Record<string, string>),
          points: run.cells
            .filter((c) => c.context === context && c.figures)
            .sort((a, b) => a.concurrency - b.concurrency)
            .map((c) => {
              const p = point(c);
              const untrusted = clientLimited(c);
              return {
                x: p.x, y: p.y, ...(p.label ? { label: p.label } : {}), ...(untrusted ? { hollow: true } : {}),
                title: `${prefix}${cellKey(c.context, c.concurrency)}: ${what(c)}${untrusted ? ' (Client-limited)' : ''}`,
              };
            }),
        };
      }),
    );
  const how = `${hollowNote(runs.flatMap((r) => r.cells.filter((c) => c.figures && contexts.includes(c.context))))}${several ? ' Colour is the run, line style the context.' : ''}`;
  const total = (c: CellResult) => `${formatRate(c.figures?.totalTokensPerSecond)} tok/s total`;
  const perRequest = (c: CellResult) => `${formatRate(c.figures?.perRequestTokensPerSecond)} tok/s per request`;
  const xC = concurrencyAxis(levels);
  return [
    lineChart({
      name: 'total',
      title: 'Total tok/s',
      description: `Output tok/s across all simultaneous requests, one line per context.${how}`,
      x: xC,
      y: { title: 'Total tok/s (tokens per second)' },
      legend,
      series: series((c) => ({ x: c.concurrency, y: c.figures?.totalTokensPerSecond }), total),
    }),
    lineChart({
      name: 'perRequest',
      title: 'Per-request tok/s',
      description: `The median request’s own speed (1000 / its time between tokens), one line per context.${how}`,
      x: xC,
      y: { title: 'Per-request tok/s (tokens per second)' },
      legend,
      series: series((c) => ({ x: c.concurrency, y: c.figures?.perRequestTokensPerSecond }), perRequest),
    }),
    lineChart({
      name: 'pareto',
      title: 'Pareto: per-request against total tok/s',
      description: `The trade-off a deployment chooses on: each point is a cell, labelled with its requests at once; one curve per context; up and to the right is better.${how}`,
      x: { title: 'Total tok/s (tokens per second)' },
      y: { title: 'Per-request tok/s (tokens per second)' },
      labels: true,
      legend,
      series: series(
        (c) => ({ x: c.figures?.totalTokensPerSecond, y: c.figures?.perRequestTokensPerSecond, label: String(c.concurrency) }),
        (c) => `${total(c)}, ${perRequest(c)}`,
      ),
    }),
    lineChart({
      name: 'ttft',
      title: 'Time to first token (median)',
      description: `Median TTFT on a log scale, one line per context (the prompt cache is warm: mostly queueing and scheduling, not prefill).${how}`,
      x: xC,
      y: { title: 'TTFT (ms, log scale)', log: true },
      legend,
      series: series((c) => ({ x: c.concurrency, y: c.figures?.ttftMs?.median }), (c) => `TTFT ${formatMs(c.figures?.ttftMs?.median)}`),
    }),
  ];
}

/** Prompt tok/s and cold TTFT against context, one line per run (named in a legend when several). */
export function prefillCharts(all: ReadonlyArray<{ name: string; rows: readonly PrefillRowResult[] }>): string[] {
  const measured = all.flatMap((r) => r.rows.filter((p) => p.figures));
  if (measured.length === 0) return [];
  const contexts = [...new Set(measured.map((p) => p.context))].sort((a, b) => a - b);
  const series = (pick: (p: PrefillRowResult) => number | undefined, unit: string): Series[] =>
    all.map((run, i) => ({
      name: run.name,
      color: PALETTE[i % PALETTE.length]!,
      data: { run: String(i) },
      points: run.rows
        .filter((p) => p.figures)
        .sort((a, b) => a.context - b.context)
        .map((p) => ({ x: p.context, y: pick(p), title: `${run.name} ${contextLabel(p.context)}: ${formatNumber(pick(p), 0)} ${unit}` })),
    }));
  const legend = all.length > 1 ? all.map((r, i) => ({ name: r.name, color: PALETTE[i % PALETTE.length]! })) : undefined;
  return [
    lineChart({
      name: 'prefillTps',
      title: 'Prefill: prompt tok/s',
      description: 'Prompt tokens per second of a cold request, by context length.',
      x: contextAxis(contexts),
      y: { title: 'Prompt tok/s (tokens per second)' },
      series: series((p) => p.figures?.promptTokensPerSecond, 'prompt tok/s'),
      ...(legend ? { legend } : {}),
    }),
    lineChart({
      name: 'prefillTtft',
      title: 'Prefill: time to first token',
      description: 'TTFT of a cold request (the whole prefill), by context length, on a log scale.',
      x: contextAxis(contexts),
      y: { title: 'TTFT (ms, log scale)', log: true },
      series: series((p) => p.figures?.ttftMs, 'ms'),
      ...(legend ? { legend } : {}),
    }),
  ];
}

function prefillTable(result: SpeedMatrixResult): string {
  const rows = new Map(result.prefill.map((p) => [p.contextLabel, p]));
  const keys = [...new Set([...plannedPrefillKeys(result.info), ...rows.keys()])].sort((a, b) => parseContext(a) - parseContext(b));
  return table(
    ['Context', 'Status', 'Prompt tok/s', 'TTFT', 'Prompt tokens'],
    keys.map((k) => {
      const p = rows.get(k);
      return [escapeHtml(k), escapeHtml(p ? STATUS_LABELS[p.status] : missingText(result)), formatPrefillRate(p?.figures?.promptTokensPerSecond), formatMs(p?.figures?.ttftMs), formatNumber(p?.figures?.promptTokens, 0)];
    }),
    [1],
  );
}

function measurementsTable(result: SpeedMatrixResult, contexts: number[], levels: number[], cells: Map<string, CellResult>): string {
  const missing = missingText(result);
  const showGoodput = result.info.run.slo !== undefined;
  const extra = extraColumnsOf(result.info.run);
  const rows: string[][] = [];
  for (const context of contexts) {
    for (const c of levels) {
      const cell = cells.get(cellKey(context, c));
      const row = cellMeasurementRow(context, c, cell, missing).map((x) => escapeHtml(x));
      if (cell?.status === 'not-run') row[3] = escapeHtml(statusWords(cell));
      else if (cell) row[3] = `<a href="#${cellAnchor(context, c)}">${escapeHtml(statusWords(cell))}</a>`;
      for (const x of extraColumnTexts(cell, extra)) row.push(escapeHtml(x));
      if (showGoodput) row.push(escapeHtml(goodputText(cell)));
      rows.push(row);
    }
  }
  return table([...ALL_MEASUREMENTS_COLUMNS, ...extraColumnTitles(extra), ...(showGoodput ? ['Goodput'] : [])], rows, [0, 3]);
}

function capacityHtml(result: SpeedMatrixResult): string {
  const slo = result.info.run.slo!;
  const rows = result.capacity?.rows ?? [];
  const out = [
    `<h2>Capacity at your SLO</h2><p>SLO: <code>${escapeHtml(slo.text)}</code>. Users at once per context, the constraint that binds, and the goodput at that point (docs/capacity.md). ` +
      'Searched: each concurrency judged, ✓ met the SLO, ✗ did not, * the search’s own cells; select one for its details.</p>',
  ];
  if (rows.length === 0) {
    out.push(`<p>${result.partial ? 'Searched after the matrix’s cells.' : 'No context was searched in this run.'}</p>`);
    return out.join('');
  }
  // every concurrency judged links to its cell's detail view (columns and the search's own cells)
  const searchedCells = new Set(result.cells.map((c) => cellKey(c.context, c.concurrency)));
  out.push(
    table(
      ['Context', 'Users at once', 'Binds', 'Goodput at capacity', 'Searched'],
      rows.map((r) => [
        escapeHtml(r.contextLabel),
        escapeHtml(r.atLeast ? `≥ ${r.capacity} (every column met it)` : `${capacityUsersText(r)}${r.confirmation && !r.confirmation.meets ? ' (unconfirmed)' : ''}`),
        escapeHtml(!r.atLeast && r.binding ? bindingText(r.binding, r.bindingConcurrency) : '—'),
        escapeHtml(r.goodput ? capacityGoodputText(r) : '—'),
        r.searched
          .map((x) => {
            const text = escapeHtml(`${x.concurrency}${x.meets ? '✓' : '✗'}${x.adaptive ? '*' : ''}`);
            return searchedCells.has(cellKey(r.context, x.concurrency)) ? `<a href="#${cellAnchor(r.context, x.concurrency)}">${text}</a>` : text;
          })
          .join(' '),
      ]),
      [2, 4],
    ),
  );
  return out.join('');
}

function upperFirst(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
