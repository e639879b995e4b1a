/**
 * Pure: SpeedMatrixResult → the Markdown page (speed-matrix.md). Sections in the order of the
 * reference pages (shared/reference): title and summary, Hardware, Engine, Run, Launch command,
 * Prefill, Sustained decode (+ legend, TTFT note), Open-loop load (with rate cells, rate-markdown.ts),
 * with an SLO Capacity at your SLO, All
 * measurements; then, only when present, threshold failures and regressions.
 */
import { plannedCellKeys, plannedPrefillKeys } from '../results/collect.js';
import { ABSENT, cutText, formatMs, formatMsPrecise, formatNumber, formatRate, HEADING_MAX_CHARS, ITEM_MAX_CHARS, percent } from '../text/format.js';
import { cellKey, contextLabel, parseContext } from '../shapes/labels.js';
import { redactSecrets } from '../redact.js';
import type { RunInfo, SpeedMatrixResult } from '../shapes/result.js';
import type { CellStatus } from '../shapes/result.js';
import { bindingText, capacityUsersText, unjudged } from '../text/capacity-line.js';
import { codeBlock, codeSpan, escapeCell, escapeLine, escapeText, markdownRow } from '../text/escape.js';
import { clientLimitedNotes, connectionNotes, bufferedNotes, errorNotes, longGapNotes, maxTokensNotes, notComputedNotes, shortWindowNotes, runningSourceNotes, samplesSetAsideNotes, streamEndingNotes, usageNotes } from './markdown-notes.js';
import { cellMeasurementRow, crossCheckText, extraColumnsOf, extraColumnTexts, extraColumnTitles, gridCell, prefillMeasurementRow, prefillSectionRow, prefillSpreadText, spreadText, statusText } from './markdown-rows.js';
import { engineItems, hardwareItems, runItems, summaryLine } from './run-items.js';
import { rateSection } from './rate-markdown.js';
import { workloadSection } from './workload-rows.js';
import {
  ALL_MEASUREMENTS_COLUMNS,
  capacityGoodputText,
  clientLimited,
  finishedCells,
  gridAxes,
  GOODPUT_COLUMN,
  goodputText,
  isText,
  matrixCells,
  missingText,
  NOT_YET,
  sloMeetsText,
  sortedUnique,
  SPREAD_COLUMN,
  STATUS_LABELS,
  STATUS_LEGEND,
  rowsAreText,
  ttftNote,
  workloadOverCapacityNote,
} from './view.js';
import { appendAll, maxOf } from '../extent.js';

/** The sustained-decode grid: its caption, a blank line, then the table (Total tok/s · TTFT per cell). */
export function decodeGrid(result: SpeedMatrixResult, axes: { contexts: number[]; levels: number[] } = gridAxes(result)): string[] {
  const cells = new Map(matrixCells(result).map((c) => [cellKey(c.context, c.concurrency), c]));
  const missing = missingText(result);
  const { contexts, levels } = axes;
  return [
    `Total tok/s · ${escapeText(rowsAreText(result))}, columns are simultaneous requests.`,
    '',
    markdownRow(['Context', ...levels.map(String)]),
    markdownRow(['---', ...levels.map(() => '---')]),
    ...contexts.map((context) => markdownRow([contextLabel(context), ...levels.map((c) => gridCell(cells.get(cellKey(context, c)), missing))])),
  ];
}

export function renderMarkdown(full: SpeedMatrixResult): string {
  // the matrix's own cells; the capacity search's adaptive cells are shown in its own section
  const result: SpeedMatrixResult = { ...full, cells: matrixCells(full) };
  const { info } = result;
  const cells = new Map(result.cells.map((c) => [cellKey(c.context, c.concurrency), c]));
  const prefill = new Map(result.prefill.map((p) => [p.context, p]));
  const planned = plannedCellKeys(info);
  const plannedPrefill = plannedPrefillKeys(info);
  const missing = missingText(result);

  const { contexts, levels } = gridAxes(result);
  const prefillContexts = sortedUnique([...plannedPrefill.map(parseContext), ...result.prefill.map((p) => p.context)]);

  const out: string[] = ['# Speed test matrix', ''];
  if (info.simulated) {
    const profile = info.simProfile ? ` (profile ${info.simProfile})` : '';
    out.push(`The server was the embedded simulated server${profile}; these figures are not from real hardware.`, '');
  }
  appendAll(out, progressLines(result, planned, plannedPrefill));
  out.push(`## ${escapeText(cutText(info.title, HEADING_MAX_CHARS))}`, '', escapeText(summaryLine(info)), '');

  appendAll(out, ['### Hardware', '', ...bullets(hardwareItems(info)), '']);
  appendAll(out, ['### Engine', '', ...bullets(engineItems(info)), '']);
  appendAll(out, ['### Run', '', ...bullets(runItems(result)), '']);
  if (info.launchCommand) {
    appendAll(out, ['### Launch command', '', ...codeBlock(redactSecrets(info.launchCommand), 'sh'), '']);
  }

  if (prefillContexts.length > 0) {
    const prefillRuns = maxOf([1, ...result.prefill.map((p) => p.repeats?.count ?? 1)]);
    const how = prefillRuns > 1 ? `median of ${prefillRuns} requests, each with a cold prompt` : 'one request, cold prompt';
    out.push('### Prefill', '', `Prompt tok/s by context length (${how}).`, '');
    out.push(markdownRow(['Context', 'Prompt tok/s', 'TTFT', 'Prompt tokens']), markdownRow(['---', '---', '---', '---']));
    for (const context of prefillContexts) out.push(markdownRow(prefillSectionRow(context, prefill.get(context), missing)));
    out.push('');
    if (result.prefill.some((p) => p.figures?.promptTokensFrom === 'local-tokenizer')) {
      out.push('Prompt tokens marked * were counted by the local tokenizer (the server reported no usage), so prompt tok/s uses that count.', '');
    }
  }

  const seen = new Set<CellStatus>();
  for (const c of result.cells) for (const s of [c.status, ...c.statuses]) seen.add(s);
  for (const p of result.prefill) seen.add(p.status);

  appendAll(out, ['### Sustained decode', '', ...decodeGrid(result, { contexts, levels }), '']);
  const chart = mermaidChart(result, { contexts, levels });
  if (chart.length > 0) appendAll(out, [...chart, '']);
  const legend = legendLine(seen);
  if (legend) out.push(legend, '');
  const overCapacity = workloadOverCapacityNote(result);
  if (overCapacity) out.push(overCapacity, '');
  out.push(ttftNote(result), '');
  // open-loop rate cells, only when the run has them
  appendAll(out, rateSection(full));
  // what a non-synthetic workload sent, and what the prefix cache did
  appendAll(out, workloadSection(full));

  if (info.run.slo) appendAll(out, [...capacitySection(full), '']);

  out.push('### All measurements', '', 'Latencies are medians. Total tok/s is output across all simultaneous requests.', '');
  // repeated cells (LLM_BENCH_REPEAT > 1): one more column with the spread of the repeats
  const showSpread = result.cells.some((c) => (c.repeats?.count ?? 1) > 1) || result.prefill.some((p) => (p.repeats?.count ?? 1) > 1);
  // with an SLO: the share of each cell's requests that met it
  const showGoodput = info.run.slo !== undefined;
  // LLM_BENCH_COLUMNS: the figures asked for after METHOD's set
  const extra = extraColumnsOf(info.run);
  const columns: string[] = [...ALL_MEASUREMENTS_COLUMNS, ...extraColumnTitles(extra), ...(showGoodput ? [GOODPUT_COLUMN] : []), ...(showSpread ? [SPREAD_COLUMN] : [])];
  out.push(markdownRow(columns), markdownRow(columns.map(() => '---')));
  for (const context of prefillContexts) {
    const r = prefill.get(context);
    out.push(markdownRow([...prefillMeasurementRow(context, r, missing), ...extra.columns.map(() => ABSENT), ...(showGoodput ? [ABSENT] : []), ...(showSpread ? [prefillSpreadText(r)] : [])]));
  }
  for (const context of contexts) {
    for (const c of levels) {
      const key = cellKey(context, c);
      const cell = cells.get(key);
      if (cell || planned.includes(key)) {
        out.push(markdownRow([...cellMeasurementRow(context, c, cell, missing), ...extraColumnTexts(cell, extra), ...(showGoodput ? [goodputText(cell)] : []), ...(showSpread ? [spreadText(cell)] : [])]));
      }
    }
  }
  out.push('');
  if (legend) out.push(legend, '');
  if (result.cells.some((c) => c.figures?.activeRequestsDisagree)) {
    out.push("⚠ Client active: the client's own time-weighted count of requests in flight. Flagged where it differs from the server's running-requests figure (Average active requests) by more than 10 %.", '');
  }

  appendAll(out, [...errorNotes(result.cells), ...connectionNotes(result.cells), ...usageNotes(result.cells), ...maxTokensNotes(result.cells), ...shortWindowNotes(result.cells), ...streamEndingNotes(result.cells), ...runningSourceNotes(result.cells), ...samplesSetAsideNotes(result.cells), ...bufferedNotes(result.cells), ...longGapNotes(result.cells), ...clientLimitedNotes(result.cells), ...notComputedNotes(result.cells)]);

  const crossChecked = result.cells.filter((c) => c.serverCrossCheck?.disagree);
  if (crossChecked.length > 0) {
    const list = crossChecked.map((c) => `${cellKey(c.context, c.concurrency)} (${crossCheckText(c)})`).join('; ');
    out.push(`⚠ Server cross-check: the server's own figures differ from the client's by more than ${formatNumber((crossChecked[0]!.serverCrossCheck!.tolerance) * 100, 0)} % in ${list}. Check these cells before trusting them.`, '');
  }

  if (showSpread) {
    out.push(
      `${SPREAD_COLUMN}: each cell and prefill row was measured ${info.run.repeat ?? 'several'} times and shows the medians; ± is half the range of the repeats over their median, for total tok/s, per request tok/s, TTFT and time between tokens (prompt tok/s and TTFT for prefill).`,
      '',
    );
  }

  if (showGoodput) {
    out.push(`${GOODPUT_COLUMN}: the share of the cell's requests that met the SLO's per-request constraints (${codeSpan(info.run.slo!.text)}), each judged on its own tok/s, TTFT and time between tokens p99; a failed request never meets. The share of output tokens follows in brackets.`, '');
  }

  const capacityRows = full.capacity?.rows ?? [];
  const rateCells = [...(full.rateCells ?? []), ...(full.rateCapacity?.rows ?? [])];
  const failures = [...result.prefill, ...result.cells, ...capacityRows, ...rateCells].flatMap((x) => x.thresholdFailures ?? []);
  if (failures.length > 0) {
    appendAll(out, ['### Threshold failures', '', ...failures.map((f) => `- ${escapeLine(f)}`), '']);
  }
  const regressions = [...result.prefill, ...result.cells, ...capacityRows, ...rateCells].flatMap((x) => x.baselineFailures ?? []);
  if (regressions.length > 0) {
    const from = info.baselinePath ? ` (${escapeText(info.baselinePath)})` : '';
    appendAll(out, [`### Regressions against the baseline${from}`, '', ...regressions.map((f) => `- ${escapeLine(f)}`), '']);
  }
  return out.join('\n');
}

/**
 * A Mermaid `xychart-beta` of total tok/s against requests at once, one line per context (GitHub
 * draws it in pages, PR comments and job summaries). Mermaid's lines have no names and need a value
 * per column, so each context's line runs over its measured columns up to its first gap (Over
 * capacity, not run), and the caption names the lines in order. Empty when nothing was measured.
 */
export function mermaidChart(result: SpeedMatrixResult, axes: { contexts: number[]; levels: number[] } = gridAxes(result)): string[] {
  const cells = new Map(matrixCells(result).map((c) => [cellKey(c.context, c.concurrency), c]));
  const lines: Array<{ label: string; values: number[] }> = [];
  /** drawn points whose timing is partly the client's: Mermaid draws every point alike, so the caption names them */
  const untrusted: string[] = [];
  for (const context of axes.contexts) {
    const values: number[] = [];
    for (const c of axes.levels) {
      const cell = cells.get(cellKey(context, c));
      const v = cell?.figures?.totalTokensPerSecond;
      if (v === undefined || !Number.isFinite(v)) break;
      values.push(Math.round(v * 10) / 10);
      if (clientLimited(cell!)) untrusted.push(cellKey(context, c));
    }
    if (values.length > 0) lines.push({ label: contextLabel(context), values });
  }
  if (lines.length === 0) return [];
  const top = maxOf(lines.flatMap((l) => l.values));
  const untrustedNote = untrusted.length > 0 ? ` Drawn but Client-limited (timings partly the client's): ${untrusted.join(', ')}.` : '';
  return [
    `Total tok/s by requests at once; one line per context, in order: ${lines.map((l) => l.label).join(', ')} (a line stops at its first cell without figures).${untrustedNote}`,
    '',
    '```mermaid',
    'xychart-beta',
    '    title "Total tok/s"',
    `    x-axis "Requests at once" [${axes.levels.join(', ')}]`,
    `    y-axis "Total tok/s" 0 --> ${Math.max(1, Math.ceil(top * 1.1))}`,
    ...lines.map((l) => `    line [${l.values.join(', ')}]`),
    '```',
  ];
}

/**
 * "Capacity at your SLO": per context the users it holds, the constraint that binds, the goodput
 * at that point, and the concurrencies searched; then the search's own (adaptive) cells.
 */
export function capacitySection(result: SpeedMatrixResult): string[] {
  const slo = result.info.run.slo!;
  const rows = result.capacity?.rows ?? [];
  const out: string[] = ['### Capacity at your SLO', ''];
  out.push(`SLO: ${codeSpan(slo.text)} (${escapeText(sloMeaning(slo))}). Capacity is the most simultaneous requests whose cell met it, below the first that did not; between the matrix's columns it is found by measuring extra cells (resolution: 1 request or 5 %, whichever is larger), and the answer is measured once more to confirm it (the goodput at capacity is that confirming cell's, beside the search's own cell at the same concurrency).`, '');
  if (rows.length === 0) {
    out.push(result.partial ? `${NOT_YET} (searched after the matrix's cells)` : 'No context was searched in this run (its capacity tests were filtered out, or none of a row\'s cells ran).', '');
    return out;
  }
  out.push(markdownRow(['Context', 'Users at once', 'Binds', 'Goodput at capacity', 'Searched']), markdownRow(['---', '---', '---', '---', '---']));
  for (const row of rows) {
    const users = row.atLeast ? `≥ ${row.capacity} (every column met it)` : `${capacityUsersText(row)}${row.confirmation && !row.confirmation.meets ? ' (unconfirmed)' : ''}`;
    const binds = row.atLeast ? ABSENT : row.binding ? bindingText(row.binding, row.bindingConcurrency) : ABSENT;
    const searched = row.searched.map((x) => `${x.concurrency}${x.meets ? '✓' : '✗'}${x.adaptive ? '*' : ''}`).join(' ');
    out.push(markdownRow([row.contextLabel, users, escapeCell(binds), row.goodput ? capacityGoodputText(row) : ABSENT, searched]));
  }
  out.push('');
  const ownCells = rows.some((r) => r.searched.some((x) => x.adaptive));
  out.push(`Searched: each concurrency judged, ✓ met the SLO, ✗ did not${ownCells ? "; * marks the search's own cells (listed below)" : ''}.`);
  const unconfirmed = rows.filter((r) => r.confirmation && !r.confirmation.meets);
  for (const r of unconfirmed) {
    const miss = r.confirmation!.binding;
    out.push(
      '',
      unjudged(miss)
        ? `⚠ ${r.contextLabel}: the confirming cell at ${r.confirmation!.concurrency} could not be judged (${escapeText(miss.detail)}), so the capacity is not confirmed either way.`
        : `⚠ ${r.contextLabel}: the confirming cell at ${r.confirmation!.concurrency} missed the SLO (${escapeText(miss?.detail ?? 'see the cell')}); the capacity sits at the edge of the SLO, so treat it as an upper bound.`,
    );
  }
  const adaptive = result.cells.filter((c) => c.adaptive).sort((a, b) => a.context - b.context || a.concurrency - b.concurrency);
  if (adaptive.length > 0) {
    const cols = ['Context', 'Requests at once', 'Status', 'Meets SLO', 'Per request tok/s', 'TTFT', 'Time between tokens', GOODPUT_COLUMN];
    out.push('', "The search's own cells, measured like the matrix's:", '', markdownRow(cols), markdownRow(cols.map(() => '---')));
    for (const c of adaptive) {
      const f = c.figures;
      const meets = sloMeetsText(c);
      out.push(
        markdownRow([
          c.contextLabel,
          String(c.concurrency),
          statusText(c),
          escapeCell(meets),
          formatRate(f?.perRequestTokensPerSecond),
          formatMs(f?.ttftMs?.median),
          formatMsPrecise(f?.timeBetweenTokensMs?.median),
          goodputText(c),
        ]),
      );
    }
  }
  return out;
}

/** "per-request tok/s ≥ 20; TTFT p90 ≤ 2,000 ms" */
function sloMeaning(slo: NonNullable<RunInfo['run']['slo']>): string {
  const stat = (s: string) => (s === 'median' ? 'median' : s);
  const parts: string[] = [];
  if (slo.perRequestTokensPerSecond) parts.push(`per-request tok/s ${stat(slo.perRequestTokensPerSecond.stat)} ≥ ${formatNumber(slo.perRequestTokensPerSecond.min, 1)}`);
  if (slo.ttftMs) parts.push(`TTFT ${stat(slo.ttftMs.stat)} ≤ ${formatMs(slo.ttftMs.max)}`);
  if (slo.timeBetweenTokensMs) parts.push(`time between tokens ${stat(slo.timeBetweenTokensMs.stat)} ≤ ${formatNumber(slo.timeBetweenTokensMs.max, 1)} ms`);
  if (slo.failedRequests) parts.push(`at most ${slo.failedRequests.max} failed requests`);
  if (slo.goodput) parts.push(`goodput ≥ ${percent(slo.goodput.min)} of requests`);
  return parts.join('; ');
}

function progressLines(result: SpeedMatrixResult, planned: string[], plannedPrefill: string[]): string[] {
  const doneCells = finishedCells(result);
  const total = Math.max(planned.length, matrixCells(result).length);
  const prefillPart =
    plannedPrefill.length > 0 ? `, ${result.prefill.length} of ${Math.max(plannedPrefill.length, result.prefill.length)} prefill rows` : '';
  if (result.partial) {
    return [`**Partial: ${doneCells} of ${total} cells finished${prefillPart}** — written after the last finished cell: the run is still going, or it was stopped (Ctrl-C, a crash) before the rest.`, ''];
  }
  if (doneCells < total) {
    const notRun = matrixCells(result).length - doneCells;
    const others = total - doneCells - notRun;
    const parts = [
      ...(notRun > 0 ? [`${notRun} could not start (Not run, with the reason)`] : []),
      ...(others > 0 ? [`${others} ${others === 1 ? 'was' : 'were'} not run`] : []),
    ];
    const why = parts.length > 0 ? ` — ${parts.join('; ')}` : '';
    return [`**Incomplete: ${doneCells} of ${total} cells finished${prefillPart}**${why}.`, ''];
  }
  return [];
}

function bullets(items: Array<[string, string | undefined]>): string[] {
  return items.filter((i): i is [string, string] => isText(i[1])).map(([k, v]) => `- **${k}**: ${escapeText(cutText(v, ITEM_MAX_CHARS))}`);
}

function legendLine(seen: Set<CellStatus>): string | undefined {
  const parts = STATUS_LEGEND.filter(([s]) => seen.has(s)).map(([s, text]) => `${STATUS_LABELS[s]}: ${text}`);
  return parts.length > 0 ? parts.join(' ') : undefined;
}
