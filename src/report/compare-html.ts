/**
 * Pure: any number of results → one comparison page (self-contained, like speed-matrix.html): the
 * runs overlaid on each chart (colour = run, dash = context), and per cell each run's figures as
 * ratios to the first run's. Written by `llm-speed-matrix report a.json b.json … --out compare.html`
 * and, beside the baseline diff, as speed-matrix-diff.html.
 */
import { cellKey, compareCellKeys, contextLabel } from '../results/labels.js';
import { formatMs, formatRate } from '../results/format.js';
import { matrixCells, summaryLine } from '../results/render-md.js';
import type { CellResult, SpeedMatrixResult } from '../results/types.js';
import { concurrencyAxis, prefillCharts } from './html.js';
import { htmlPage, table } from './style.js';
import { DASHES, escapeHtml, lineChart, PALETTE, type LegendItem, type Series } from './svg.js';

export interface ComparedRun {
  label: string;
  result: SpeedMatrixResult;
}

/** A run's name when none is given: engine, version and when it started, from its run info. */
export function runName(result: SpeedMatrixResult): string {
  const { info } = result;
  return [info.engine.engine, info.engine.version, info.simProfile ? `sim ${info.simProfile}` : undefined, info.startedAt.slice(0, 16).replace('T', ' ')]
    .filter((x): x is string => typeof x === 'string' && x !== '')
    .join(' · ');
}

/** `0.83×`; the class says whether it is better or worse than the first run (for TTFT lower is better) */
function ratioCell(base: number | undefined, next: number | undefined, higherIsBetter: boolean, run: number, figure: string): string {
  if (base === undefined || next === undefined || !(base > 0)) return '—';
  const r = next / base;
  const better = higherIsBetter ? r > 1.05 : r < 0.95;
  const worse = higherIsBetter ? r < 0.95 : r > 1.05;
  return `<span class="ratio${better ? ' better' : worse ? ' worse' : ''}" data-run="${run}" data-figure="${figure}" data-ratio="${r.toFixed(4)}">${r.toFixed(2)}×</span>`;
}

export function renderCompareHtml(runs: readonly ComparedRun[]): string {
  if (runs.length === 0) throw new Error('renderCompareHtml: no runs');
  const color = (i: number) => PALETTE[i % PALETTE.length]!;
  const cellsOf = runs.map((r) => matrixCells(r.result).filter((c) => c.figures));
  const contexts = [...new Set(cellsOf.flat().map((c) => c.context))].sort((a, b) => a - b);
  const levels = [...new Set(runs.flatMap((r) => [...r.result.info.run.concurrency, ...matrixCells(r.result).map((c) => c.concurrency)]))].sort((a, b) => a - b);
  const dash = (context: number) => DASHES[contexts.indexOf(context) % DASHES.length];

  const series = (point: (c: CellResult) => { x?: number; y?: number; label?: string }, what: (c: CellResult) => string): Series[] =>
    runs.flatMap((run, i) =>
      contexts.map((context) => ({
        name: `${run.label} · ${contextLabel(context)}`,
        color: color(i),
        dash: dash(context),
        data: { run: String(i), context: contextLabel(context) },
        points: cellsOf[i]!
          .filter((c) => c.context === context)
          .sort((a, b) => a.concurrency - b.concurrency)
          .map((c) => {
            const p = point(c);
            return { x: p.x, y: p.y, ...(p.label ? { label: p.label } : {}), title: `${run.label}, ${cellKey(c.context, c.concurrency)}: ${what(c)}` };
          }),
      })),
    );
  const legend: LegendItem[] = [
    ...runs.map((r, i) => ({ name: r.label, color: color(i) })),
    ...contexts.map((context) => ({ name: `context ${contextLabel(context)}`, color: '#555', dash: dash(context) })),
  ];
  const xC = concurrencyAxis(levels);
  const total = (c: CellResult) => `${formatRate(c.figures?.totalTokensPerSecond)} tok/s total`;
  const perReq = (c: CellResult) => `${formatRate(c.figures?.perRequestTokensPerSecond)} tok/s per request`;
  const charts = [
    lineChart({
      name: 'total',
      title: 'Total tok/s',
      description: 'Colour is the run, line style the context.',
      x: xC,
      y: { title: 'Total tok/s (tokens per second)' },
      legend,
      series: series((c) => ({ x: c.concurrency, y: c.figures?.totalTokensPerSecond }), total),
    }),
    lineChart({
      name: 'perRequest',
      title: 'Per-request tok/s',
      description: 'Colour is the run, line style the context.',
      x: xC,
      y: { title: 'Per-request tok/s (tokens per second)' },
      legend,
      series: series((c) => ({ x: c.concurrency, y: c.figures?.perRequestTokensPerSecond }), perReq),
    }),
    lineChart({
      name: 'pareto',
      title: 'Pareto: per-request against total tok/s',
      description: 'Each point is a cell, labelled with its requests at once; up and to the right is better.',
      x: { title: 'Total tok/s (tokens per second)' },
      y: { title: 'Per-request tok/s (tokens per second)' },
      labels: true,
      legend,
      series: series((c) => ({ x: c.figures?.totalTokensPerSecond, y: c.figures?.perRequestTokensPerSecond, label: String(c.concurrency) }), (c) => `${total(c)}, ${perReq(c)}`),
    }),
    lineChart({
      name: 'ttft',
      title: 'Time to first token (median)',
      description: 'Log scale; colour is the run, line style the context.',
      x: xC,
      y: { title: 'TTFT (ms, log scale)', log: true },
      legend,
      series: series((c) => ({ x: c.concurrency, y: c.figures?.ttftMs?.median }), (c) => `TTFT ${formatMs(c.figures?.ttftMs?.median)}`),
    }),
  ];
  const prefill = prefillCharts([], runs.map((r) => ({ name: r.label, rows: r.result.prefill })));

  const body: string[] = ['<h1>Speed matrix comparison</h1>'];
  body.push(
    table(
      ['', 'Run', 'Title', 'Summary'],
      runs.map((r, i) => [
        `<span class="status" style="background:${color(i)}">&nbsp;&nbsp;</span>`,
        escapeHtml(r.label),
        escapeHtml(r.result.info.title),
        escapeHtml(summaryLine(r.result.info)),
      ]),
      [1, 2, 3],
    ),
  );
  body.push('<h2>Sustained decode</h2>', '<div class="charts">', ...charts, '</div>');
  if (prefill.length > 0) body.push('<h2>Prefill</h2>', '<div class="charts">', ...prefill, '</div>');
  body.push(ratioTable(runs, cellsOf));
  return htmlPage(`Speed matrix comparison: ${runs.map((r) => r.label).join(' vs ')}`, body.join('\n'));
}

function ratioTable(runs: readonly ComparedRun[], cellsOf: readonly CellResult[][]): string {
  if (runs.length < 2) return '';
  const maps = cellsOf.map((cells) => new Map(cells.map((c) => [cellKey(c.context, c.concurrency), c])));
  const keys = [...new Set(cellsOf.flat().map((c) => cellKey(c.context, c.concurrency)))].sort(compareCellKeys);
  const head = ['Cell', ...runs.slice(1).flatMap((r) => [`${r.label}: total tok/s`, `${r.label}: per request`, `${r.label}: TTFT`])];
  const rows = keys.map((key) => {
    const base = maps[0]!.get(key)?.figures;
    return [
      escapeHtml(key),
      ...runs.slice(1).flatMap((_, j) => {
        const next = maps[j + 1]!.get(key)?.figures;
        return [
          ratioCell(base?.totalTokensPerSecond, next?.totalTokensPerSecond, true, j + 1, 'totalTokensPerSecond'),
          ratioCell(base?.perRequestTokensPerSecond, next?.perRequestTokensPerSecond, true, j + 1, 'perRequestTokensPerSecond'),
          ratioCell(base?.ttftMs?.median, next?.ttftMs?.median, false, j + 1, 'ttftMs'),
        ];
      }),
    ];
  });
  return (
    `<h2>Ratios to ${escapeHtml(runs[0]!.label)}</h2><p>Each run's figure over the first run's, per cell (TTFT is the median; below 1 is faster). ` +
    'Marked where a run is more than 5 % better or worse.</p>' +
    table(head, rows, [0])
  );
}
