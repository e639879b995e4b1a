/**
 * Pure: any number of results → one comparison page (self-contained, like speed-matrix.html): the
 * runs overlaid on each chart (colour = run, dash = context; the open-loop latency-against-rate
 * charts too, when a run has rate cells), and per cell each run's figures as
 * ratios to the first run's. Written by `llm-speed-matrix report a.json b.json … --out compare.html`
 * and, beside the baseline diff, as speed-matrix-diff.html.
 */
import { cellKey, compareCellKeys } from '../shapes/labels.js';
import { summaryLine } from './run-items.js';
import { configuredRateCells, matrixCells, RATE_SECTION, shortStatusWords, STATUS_LABELS } from './view.js';
import { rateCharts } from './rate-html.js';
import type { CellResult, SpeedMatrixResult } from '../shapes/result.js';
import { decodeCharts, prefillCharts } from './html.js';
import { htmlPage, table } from './html-frame.js';
import { escapeHtml } from '../text/escape.js';
import { PALETTE } from './svg.js';
import { appendAll } from '../extent.js';
import { matrixDifferences } from '../judge/compare.js';
import { cutText, HEADING_MAX_CHARS } from '../text/format.js';

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

/**
 * What the runs measured differently from the first (matrix, output length, window, endpoint,
 * workload: judge/compare.ts matrixDifferences), and whether any cell is in two of them; [] when
 * they measured the same. `compare` refuses such a pair; a report overlays them, and says so.
 */
export function runDifferences(runs: readonly ComparedRun[]): string[] {
  const first = runs[0];
  if (!first) return [];
  const out: string[] = [];
  for (const r of runs.slice(1)) {
    for (const d of matrixDifferences(first.result.info, r.result.info, 'matrix', [first.label, r.label])) out.push(d);
  }
  const keys = runs.map((r) => new Set(matrixCells(r.result).filter((c) => c.figures).map((c) => cellKey(c.context, c.concurrency))));
  const shared = [...keys[0]!].some((k) => keys.slice(1).some((ks) => ks.has(k)));
  if (runs.length > 1 && !shared) out.push('no measured cell is in two of the runs: the ratio table is empty');
  return out;
}

export function renderCompareHtml(runs: readonly ComparedRun[]): string {
  if (runs.length === 0) throw new Error('renderCompareHtml: no runs');
  const color = (i: number) => PALETTE[i % PALETTE.length]!;
  const cellsOf = runs.map((r) => matrixCells(r.result).filter((c) => c.figures));
  const contexts = [...new Set(cellsOf.flat().map((c) => c.context))].sort((a, b) => a - b);
  const levels = [...new Set(runs.flatMap((r) => [...r.result.info.run.concurrency, ...matrixCells(r.result).map((c) => c.concurrency)]))].sort((a, b) => a - b);
  const charts = decodeCharts(runs.map((r, i) => ({ label: r.label, cells: cellsOf[i]! })), contexts, levels);
  const prefill = prefillCharts(runs.map((r) => ({ name: r.label, rows: r.result.prefill })));

  const body: string[] = ['<h1>Speed matrix comparison</h1>'];
  body.push(
    table(
      ['', 'Run', 'Title', 'Summary'],
      runs.map((r, i) => [
        `<span class="status" style="background:${color(i)}">&nbsp;&nbsp;</span>`,
        escapeHtml(r.label),
        escapeHtml(cutText(r.result.info.title, HEADING_MAX_CHARS)),
        escapeHtml(summaryLine(r.result.info)),
      ]),
      [1, 2, 3],
    ),
  );
  const differences = runDifferences(runs);
  if (differences.length > 0) {
    body.push(`<p class="note">These runs measured different things, so a cell compares only with the same cell of another run: ${differences.map((d) => escapeHtml(d)).join('; ')}.</p>`);
  }
  appendAll(body, ['<h2>Sustained decode</h2>', '<div class="charts">', ...charts, '</div>']);
  if (prefill.length > 0) appendAll(body, ['<h2>Prefill</h2>', '<div class="charts">', ...prefill, '</div>']);
  // open-loop rate cells, when a run has them: latency against the rate, the runs overlaid, knees ringed
  const rateLines = rateCharts(runs.map((r) => ({ label: r.label, cells: configuredRateCells(r.result) })));
  if (rateLines.length > 0) appendAll(body, [`<h2>${escapeHtml(RATE_SECTION)}</h2>`, '<div class="charts">', ...rateLines, '</div>']);
  body.push(ratioTable(runs, cellsOf));
  return htmlPage(`Speed matrix comparison: ${runs.map((r) => r.label).join(' vs ')}`, body.join('\n'));
}

function ratioTable(runs: readonly ComparedRun[], cellsOf: readonly CellResult[][]): string {
  if (runs.length < 2) return '';
  // every matrix cell of each run (a cell without figures has no ratios, but has a status)
  const maps = runs.map((r) => new Map(matrixCells(r.result).map((c) => [cellKey(c.context, c.concurrency), c])));
  const keys = [...new Set(cellsOf.flat().map((c) => cellKey(c.context, c.concurrency)))].sort(compareCellKeys);
  const head = ['Cell', ...runs.slice(1).flatMap((r) => [`${r.label}: total tok/s`, `${r.label}: per request`, `${r.label}: TTFT`])];
  const rows = keys.map((key) => {
    const base = maps[0]!.get(key)?.figures;
    // a cell whose status differs between the runs (failed requests in one, say) is not like for like
    const statuses = maps.map((m) => {
      const cell = m.get(key);
      return cell === undefined ? STATUS_LABELS['not-run'] : shortStatusWords(cell);
    });
    const differ = statuses.some((s) => s !== statuses[0]);
    const note = differ ? `<br><small data-statuses>${statuses.map((s, i) => `${escapeHtml(runs[i]!.label)}: ${escapeHtml(s)}`).join(' · ')}</small>` : '';
    return [
      `${escapeHtml(key)}${note}`,
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
    "Marked where a run is more than 5 % better or worse; a cell whose status differs between the runs names each run's.</p>" +
    table(head, rows, [0])
  );
}
