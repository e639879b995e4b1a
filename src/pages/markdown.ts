/**
 * Pure: SpeedMatrixResult → the Markdown page (speed-matrix.md). Sections in the order of the
 * reference pages (shared/reference): title and summary, Hardware, Engine, Run, Launch command,
 * Prefill, Sustained decode (+ legend, TTFT note), with an SLO Capacity at your SLO, All
 * measurements; then, only when present, threshold failures and regressions.
 */
import { plannedCellKeys, plannedPrefillKeys } from '../results/collect.js';
import {
  ABSENT,
  formatCount,
  formatMs,
  formatMsPrecise,
  formatNumber,
  formatPrefillRate,
  formatRate,
  formatSeconds,
} from './format.js';
import { cellKey, contextLabel, parseCellKey, parseContext } from '../shapes/labels.js';
import { redactSecrets } from '../redact.js';
import type { CellResult, FigureSpread, PrefillRowResult, RunInfo, SpeedMatrixResult } from '../shapes/result.js';
import type { CellStatus } from '../shapes/result.js';
import type { CellFigures } from '../shapes/result.gen.js';
import { bindingText } from '../slo/capacity.js';

/** shown for a planned cell or prefill row that has not finished yet (partial page) */
export const NOT_YET = '…';
/** shown for a planned cell that never ran (final page of an interrupted or filtered run) */
export const NOT_RUN = 'Not run';

export const STATUS_LABELS: Record<CellStatus, string> = {
  valid: 'Valid',
  'over-capacity': 'Over capacity',
  'requests-queued': 'Requests queued',
  'warmup-timed-out': 'Warm-up timed out',
  errors: 'Errors',
  'client-limited': 'Client-limited',
  'stream-buffered': 'Stream buffered',
  'not-run': 'Not run',
};

/** Legend sentences, in the order they are listed. */
export const STATUS_LEGEND: ReadonlyArray<[CellStatus, string]> = [
  ['requests-queued', 'the server could not run all requests at once, so some waited in a queue.'],
  ['over-capacity', "not run because this many requests at this context would exceed the server's KV cache."],
  ['warmup-timed-out', 'the server did not become idle before the cell, or not every request was streaming before the window, within the timeout; measured anyway.'],
  ['errors', 'one or more requests failed inside the cell (count in brackets); the figures cover the rest.'],
  ['client-limited', 'the load generator itself fell behind (event-loop delay over its bound), so the figures may be wrong.'],
  ['stream-buffered', "the tokens arrived in bursts no engine produces: something between the server and the load generator (a proxy's buffering, a gzip tier) held the stream, so TTFT and the time between tokens are its, not the server's."],
  ['not-run', 'the cell could not start (the reason follows); nothing was measured.'],
];

export const TTFT_NOTE = "TTFT is measured after the benchmark warms the server's prompt cache, so it mostly excludes prefill.";

export const ALL_MEASUREMENTS_COLUMNS = [
  'Phase', 'Context', 'Requests at once', 'Status', 'Total tok/s', 'Per request tok/s', 'TTFT',
  'Time between tokens', 'Average active requests', 'Completed requests', 'Output tokens', 'Measured for',
  'Failed requests', 'Client active',
] as const;

/** The grid's rows and columns: every context and concurrency of the run, of a finished cell or of a planned one, ascending. */
export function gridAxes(result: SpeedMatrixResult): { contexts: number[]; levels: number[] } {
  const planned = plannedCellKeys(result.info);
  return {
    contexts: sortedUnique([...result.info.run.contexts, ...matrixCells(result).map((c) => c.context), ...planned.map((k) => parseCellKey(k).context)]),
    levels: sortedUnique([...result.info.run.concurrency, ...matrixCells(result).map((c) => c.concurrency), ...planned.map((k) => parseCellKey(k).concurrency)]),
  };
}

/** The sustained-decode grid: its caption, a blank line, then the table (Total tok/s · TTFT per cell). */
export function decodeGrid(result: SpeedMatrixResult, axes: { contexts: number[]; levels: number[] } = gridAxes(result)): string[] {
  const cells = new Map(matrixCells(result).map((c) => [cellKey(c.context, c.concurrency), c]));
  const missing = result.partial ? NOT_YET : NOT_RUN;
  const { contexts, levels } = axes;
  return [
    'Total tok/s · rows are context length, columns are simultaneous requests.',
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
  const missing = result.partial ? NOT_YET : NOT_RUN;

  const { contexts, levels } = gridAxes(result);
  const prefillContexts = sortedUnique([...plannedPrefill.map(parseContext), ...result.prefill.map((p) => p.context)]);

  const out: string[] = ['# Speed test matrix', ''];
  if (info.simulated) {
    const profile = info.simProfile ? ` (profile ${info.simProfile})` : '';
    out.push(`The server was the embedded simulated server${profile}; these figures are not from real hardware.`, '');
  }
  out.push(...progressLines(result, planned, plannedPrefill));
  out.push(`## ${escapeText(info.title)}`, '', escapeText(summaryLine(info)), '');

  out.push('### Hardware', '', ...bullets(hardwareItems(info)), '');
  out.push('### Engine', '', ...bullets(engineItems(info)), '');
  out.push('### Run', '', ...bullets(runItems(result)), '');
  if (info.launchCommand) {
    out.push('### Launch command', '', ...codeBlock(redactSecrets(info.launchCommand), 'sh'), '');
  }

  if (prefillContexts.length > 0) {
    const prefillRuns = Math.max(1, ...result.prefill.map((p) => p.repeats?.count ?? 1));
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

  out.push('### Sustained decode', '', ...decodeGrid(result, { contexts, levels }), '');
  const chart = mermaidChart(result, { contexts, levels });
  if (chart.length > 0) out.push(...chart, '');
  const legend = legendLine(seen);
  if (legend) out.push(legend, '');
  out.push(TTFT_NOTE, '');

  if (info.run.slo) out.push(...capacitySection(full), '');

  out.push('### All measurements', '', 'Latencies are medians. Total tok/s is output across all simultaneous requests.', '');
  // repeated cells (LLM_BENCH_REPEAT > 1): one more column with the spread of the repeats
  const showSpread = result.cells.some((c) => (c.repeats?.count ?? 1) > 1) || result.prefill.some((p) => (p.repeats?.count ?? 1) > 1);
  // with an SLO: the share of each cell's requests that met it
  const showGoodput = info.run.slo !== undefined;
  const columns: string[] = [...ALL_MEASUREMENTS_COLUMNS, ...(showGoodput ? [GOODPUT_COLUMN] : []), ...(showSpread ? [SPREAD_COLUMN] : [])];
  out.push(markdownRow(columns), markdownRow(columns.map(() => '---')));
  for (const context of prefillContexts) {
    const r = prefill.get(context);
    out.push(markdownRow([...prefillMeasurementRow(context, r, missing), ...(showGoodput ? [ABSENT] : []), ...(showSpread ? [prefillSpreadText(r)] : [])]));
  }
  for (const context of contexts) {
    for (const c of levels) {
      const key = cellKey(context, c);
      const cell = cells.get(key);
      if (cell || planned.includes(key)) {
        out.push(markdownRow([...cellMeasurementRow(context, c, cell, missing), ...(showGoodput ? [goodputText(cell)] : []), ...(showSpread ? [spreadText(cell)] : [])]));
      }
    }
  }
  out.push('');
  if (legend) out.push(legend, '');
  if (result.cells.some((c) => c.figures?.activeRequestsDisagree)) {
    out.push(
      "⚠ Client active: the client's own time-weighted count of requests in flight. Flagged where it differs from the server's running-requests figure (Average active requests) by more than 10 %.",
      '',
    );
  }

  out.push(...errorNotes(result.cells), ...connectionNotes(result.cells), ...usageNotes(result.cells), ...streamEndingNotes(result.cells), ...runningSourceNotes(result.cells), ...bufferedNotes(result.cells), ...notComputedNotes(result.cells));

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
  const failures = [...result.prefill, ...result.cells, ...capacityRows].flatMap((x) => x.thresholdFailures ?? []);
  if (failures.length > 0) {
    out.push('### Threshold failures', '', ...failures.map((f) => `- ${escapeCell(f)}`), '');
  }
  const regressions = [...result.prefill, ...result.cells, ...capacityRows].flatMap((x) => x.baselineFailures ?? []);
  if (regressions.length > 0) {
    const from = info.baselinePath ? ` (${escapeText(info.baselinePath)})` : '';
    out.push(`### Regressions against the baseline${from}`, '', ...regressions.map((f) => `- ${escapeCell(f)}`), '');
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
  for (const context of axes.contexts) {
    const values: number[] = [];
    for (const c of axes.levels) {
      const v = cells.get(cellKey(context, c))?.figures?.totalTokensPerSecond;
      if (v === undefined || !Number.isFinite(v)) break;
      values.push(Math.round(v * 10) / 10);
    }
    if (values.length > 0) lines.push({ label: contextLabel(context), values });
  }
  if (lines.length === 0) return [];
  const top = Math.max(...lines.flatMap((l) => l.values));
  return [
    `Total tok/s by requests at once; one line per context, in order: ${lines.map((l) => l.label).join(', ')} (a line stops at its first cell without figures).`,
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

/** the matrix's planned cells, without the capacity search's adaptive ones */
export function matrixCells(result: Pick<SpeedMatrixResult, 'cells'>): CellResult[] {
  return result.cells.filter((c) => !c.adaptive);
}

/** matrix cells that finished: measured or Over capacity, not Not run */
export function finishedCells(result: Pick<SpeedMatrixResult, 'cells'>): number {
  return matrixCells(result).filter((c) => c.status !== 'not-run').length;
}

export const GOODPUT_COLUMN = 'Goodput';

/** "92 % (95 % of tokens)", or — without goodput */
export function goodputText(cell: Pick<CellResult, 'goodput'> | undefined): string {
  const g = cell?.goodput;
  if (!g || g.requests.judged === 0) return ABSENT;
  return `${percent(g.requests.share)} (${percent(g.tokens.share)} of tokens)`;
}

function percent(share: number): string {
  const p = share * 100;
  return `${formatNumber(p, p > 0 && p < 10 ? 1 : 0)} %`;
}

/**
 * "Capacity at your SLO": per context the users it holds, the constraint that binds, the goodput
 * at that point, and the concurrencies searched; then the search's own (adaptive) cells.
 */
export function capacitySection(result: SpeedMatrixResult): string[] {
  const slo = result.info.run.slo!;
  const rows = result.capacity?.rows ?? [];
  const out: string[] = ['### Capacity at your SLO', ''];
  out.push(`SLO: ${codeSpan(slo.text)} (${escapeText(sloMeaning(slo))}). Capacity is the most simultaneous requests whose cell met it, below the first that did not; between the matrix's columns it is found by measuring extra cells (resolution: 1 request or 5 %, whichever is larger), and the answer is measured once more to confirm it.`, '');
  if (rows.length === 0) {
    out.push(result.partial ? `${NOT_YET} (searched after the matrix's cells)` : 'No context was searched in this run (its capacity tests were filtered out, or none of a row\'s cells ran).', '');
    return out;
  }
  out.push(markdownRow(['Context', 'Users at once', 'Binds', 'Goodput at capacity', 'Searched']), markdownRow(['---', '---', '---', '---', '---']));
  for (const row of rows) {
    const users = row.atLeast ? `≥ ${row.capacity} (every column met it)` : `${row.capacity}${row.confirmation && !row.confirmation.meets ? ' (unconfirmed)' : ''}`;
    const binds = row.atLeast ? ABSENT : row.binding ? bindingText(row.binding, row.bindingConcurrency) : ABSENT;
    const searched = row.searched.map((x) => `${x.concurrency}${x.meets ? '✓' : '✗'}${x.adaptive ? '*' : ''}`).join(' ');
    out.push(markdownRow([row.contextLabel, users, escapeCell(binds), row.goodput ? goodputText(row) : ABSENT, searched]));
  }
  out.push('');
  out.push("Searched: each concurrency judged, ✓ met the SLO, ✗ did not; * marks the search's own cells (listed below).");
  const unconfirmed = rows.filter((r) => r.confirmation && !r.confirmation.meets);
  for (const r of unconfirmed) {
    out.push('', `⚠ ${r.contextLabel}: the confirming cell at ${r.confirmation!.concurrency} missed the SLO (${escapeText(r.confirmation!.binding?.detail ?? 'see the cell')}); the capacity sits at the edge of the SLO, so treat it as an upper bound.`);
  }
  const adaptive = result.cells.filter((c) => c.adaptive).sort((a, b) => a.context - b.context || a.concurrency - b.concurrency);
  if (adaptive.length > 0) {
    const cols = ['Context', 'Requests at once', 'Status', 'Meets SLO', 'Per request tok/s', 'TTFT', 'Time between tokens', GOODPUT_COLUMN];
    out.push('', "The search's own cells, measured like the matrix's:", '', markdownRow(cols), markdownRow(cols.map(() => '---')));
    for (const c of adaptive) {
      const f = c.figures;
      const meets = c.slo ? (c.slo.meets ? 'yes' : `no: ${c.slo.binding?.detail ?? ''}`) : ABSENT;
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
    const why = notRun > 0 ? ` — ${notRun} could not start (Not run, with the reason), the others were not run` : ' — the others were not run';
    return [`**Incomplete: ${doneCells} of ${total} cells finished${prefillPart}**${why}.`, ''];
  }
  return [];
}

/** `<engine> · <version> · <quantization> · N contexts (min–max) × M concurrency levels (min–max) · prefill at …` */
export function summaryLine(info: RunInfo): string {
  const contexts = sortedUnique(info.run.contexts);
  const levels = sortedUnique(info.run.concurrency);
  const parts = [info.engine.engine, info.engine.version, info.engine.quantization].filter(isText);
  parts.push(
    `${countRange(contexts.length, 'context', 'contexts', contexts.map(contextLabel))} × ` +
      countRange(levels.length, 'concurrency level', 'concurrency levels', levels.map(String)),
  );
  const prefill = sortedUnique(info.run.prefillContexts);
  if (prefill.length > 0) parts.push(`prefill at ${prefill.map(contextLabel).join(', ')}`);
  return parts.join(' · ');
}

function countRange(n: number, one: string, many: string, labels: string[]): string {
  const range = labels.length === 0 ? '' : labels.length === 1 ? ` (${labels[0]})` : ` (${labels[0]}–${labels[labels.length - 1]})`;
  return `${n} ${n === 1 ? one : many}${range}`;
}

export function hardwareItems(info: RunInfo): Array<[string, string | undefined]> {
  const h = info.hardware;
  return [
    ['Type', h.type],
    ['GPU', h.gpu],
    ['GPU count', h.gpuCount === undefined ? undefined : String(h.gpuCount)],
    ['VRAM', h.vram],
    ['CPU', h.cpu],
    ['RAM', h.ram],
    ['OS', h.os],
    ['Values from', h.source],
  ];
}

export function engineItems(info: RunInfo): Array<[string, string | undefined]> {
  const e = info.engine;
  const s = info.server;
  const sourced = (v: { value: number; source: string } | undefined, unit: string) =>
    v === undefined ? undefined : `${formatCount(v.value)}${unit} (${v.source})`;
  return [
    ['Engine', e.engine],
    ['Version', e.version],
    ['Quantization', e.quantization],
    ['Backend', e.backend],
    ['Repository', e.repository],
    ['Build', e.build],
    ['Commit', e.commit],
    ['Detected by', e.detectedBy],
    ['Detection note', e.detectionNote],
    ['KV cache', sourced(s.kvCapacityTokens, ' tokens')],
    ['Max running requests', sourced(s.maxRunningRequests, '')],
    ['Max model length', sourced(s.maxModelLen, ' tokens')],
  ];
}

export function runItems(result: SpeedMatrixResult): Array<[string, string | undefined]> {
  const { run } = result.info;
  return [
    ['Served model', run.servedModel],
    ['Revision', run.revision],
    ['Benchmark tool', `${run.tool.name} v${run.tool.version.replace(/^v/, '')}`],
    ['Decode test', 'Fixed duration'],
    ['Prefill mode', prefillModeText(result)],
    ['Prompt sizes', calibrationText(result)],
    ['Output tokens', tokenSourceText(result.cells)],
    ['Time per measurement', `${formatNumber(run.windowS, Number.isInteger(run.windowS) ? 0 : 1)} s`],
    ['Repeats per cell', run.repeat !== undefined && run.repeat > 1 ? `${run.repeat} (figures are the medians)` : undefined],
    ['Max output', `${formatCount(run.maxOutputTokens)} tokens`],
    ['Output length', run.outputLengthForced === false ? 'not forced (the engine cannot ignore end-of-sequence): counted what was produced' : undefined],
    ['Endpoint', run.endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions'],
    ['Target', result.info.targetUrl],
    ['Simulator overrides', result.info.simOverrides ? JSON.stringify(result.info.simOverrides) : undefined],
    ['Baseline', result.info.baselinePath],
    [
      'Resumed from',
      result.info.resumedFrom
        ? `${result.info.resumedFrom.path} (started ${result.info.resumedFrom.startedAt}): ${[...result.cells, ...result.prefill].filter((x) => x.resumed).length} cells and rows kept, the rest measured in this run`
        : undefined,
    ],
    ['Started', result.info.startedAt],
    ['Ended', result.endedAt],
  ];
}

/**
 * How the prompts were sized, from the rows' calibration records: exact (tokenizer) or estimated
 * (usage.prompt_tokens), and every context whose prompt missed its target's tolerance.
 */
function calibrationText(result: SpeedMatrixResult): string | undefined {
  const byContext = new Map<number, { calibration: NonNullable<CellResult['calibration']>; promptTokens?: number }>();
  for (const row of [...result.prefill, ...result.cells]) {
    if (row.calibration && !byContext.has(row.context)) {
      byContext.set(row.context, { calibration: row.calibration, ...('promptTokens' in row && row.promptTokens !== undefined ? { promptTokens: row.promptTokens } : {}) });
    }
  }
  if (byContext.size === 0) return undefined;
  const records = [...byContext.entries()].sort((a, b) => a[0] - b[0]);
  const estimated = records.some(([, r]) => r.calibration.mode === 'estimated');
  const local = records.find(([, r]) => r.calibration.countedBy === 'local-tokenizer')?.[1].calibration;
  const how = estimated
    ? 'estimated from usage.prompt_tokens (the server has no tokenize endpoint)'
    : local
      ? local.templateTokens !== undefined
        ? `exact, with the local tokenizer (LLM_BENCH_TOKENIZER; the server has no tokenize endpoint), plus the chat template's ${formatCount(local.templateTokens)} tokens from the server's usage`
        : "with the local tokenizer (LLM_BENCH_TOKENIZER; the server has no tokenize endpoint), content only: the server reports no usage, so the chat template's tokens are not counted"
      : "exact, through the server's tokenizer";
  const missed = records
    .filter(([, r]) => !r.calibration.withinTolerance)
    .map(([context, r]) => `${contextLabel(context)}${r.promptTokens !== undefined ? ` at ${formatCount(r.promptTokens)}` : ''} for ${formatCount(r.calibration.targetTokens)} ± ${formatCount(r.calibration.toleranceTokens)}`);
  return missed.length > 0 ? `${how}; missed the target: ${missed.join(', ')}` : `${how}, within max(64, 0.5 %) of each target`;
}

/** "Measured during decode warm-up", "Separate cold request per context", or which rows are which. */
function prefillModeText(result: SpeedMatrixResult): string {
  const mode = result.info.run.prefillMode;
  if (mode === 'separate') return 'Separate cold request per context';
  if (mode === 'measured-during-decode-warm-up') return 'Measured during decode warm-up';
  const contexts = new Set(result.info.run.contexts);
  const rows = sortedUnique(result.info.run.prefillContexts);
  const warm = rows.filter((c) => contexts.has(c)).map(contextLabel);
  const cold = rows.filter((c) => !contexts.has(c)).map(contextLabel);
  return `Measured during decode warm-up (${warm.join(', ')}); separate cold request (${cold.join(', ')})`;
}

function bullets(items: Array<[string, string | undefined]>): string[] {
  return items.filter((i): i is [string, string] => isText(i[1])).map(([k, v]) => `- **${k}**: ${escapeText(v)}`);
}

/** Status text of a cell: every non-valid status, the main one first, errors with their count. */
export function statusText(cell: Pick<CellResult, 'status' | 'statuses' | 'evidence' | 'figures' | 'notRunReason'>): string {
  if (cell.status === 'not-run') return cell.notRunReason ? `${STATUS_LABELS['not-run']}: ${escapeText(cell.notRunReason)}` : STATUS_LABELS['not-run'];
  const all = [cell.status, ...cell.statuses.filter((s) => s !== cell.status)].filter((s) => s !== 'valid');
  if (all.length === 0) return STATUS_LABELS.valid;
  return all
    .map((s) => {
      // judged from the client's own timelines: the server exposes no running or waiting figure
      if (s === 'requests-queued' && cell.evidence.queued?.source === 'client') return `${STATUS_LABELS[s]} (client-side)`;
      if (s !== 'errors') return STATUS_LABELS[s];
      const count = cell.evidence.errors?.count ?? cell.figures?.failedRequests;
      return count === undefined ? STATUS_LABELS.errors : `${STATUS_LABELS.errors} (${count})`;
    })
    .join(', ');
}

/** One grid cell: `**2,616.6** tok/s · 1,458 ms TTFT`, `59.3 · Requests queued · 122 ms TTFT`, `Over capacity`. */
export function gridCell(cell: CellResult | undefined, missing: string = NOT_YET): string {
  if (!cell) return missing;
  const f = cell.figures;
  if (!f) return statusText(cell);
  const ttft = `${formatMs(f.ttftMs?.median)} TTFT`;
  if (cell.status === 'valid' && cell.statuses.every((s) => s === 'valid')) {
    return `**${formatRate(f.totalTokensPerSecond)}** tok/s · ${ttft}`;
  }
  return `${formatRate(f.totalTokensPerSecond)} · ${statusText(cell)} · ${ttft}`;
}

function prefillStatus(row: PrefillRowResult): string {
  return STATUS_LABELS[row.status];
}

function prefillSectionRow(context: number, r: PrefillRowResult | undefined, missing: string): string[] {
  if (!r) return [contextLabel(context), missing, ABSENT, ABSENT];
  const f = r.figures;
  const rate = f ? formatPrefillRate(f.promptTokensPerSecond, 0) : prefillStatus(r);
  return [r.contextLabel, rate, formatMs(f?.ttftMs), `${formatCount(f?.promptTokens)}${f?.promptTokensFrom === 'local-tokenizer' ? ' *' : ''}`];
}

function prefillMeasurementRow(context: number, r: PrefillRowResult | undefined, missing: string): string[] {
  const label = r?.contextLabel ?? contextLabel(context);
  const f = r?.figures;
  const notRun = r === undefined || r.status === 'over-capacity';
  const sent = r?.repeats?.count ?? 1;
  // one request: it failed or completed; repeated: the counts of the repeats
  const failedCount = r?.repeats ? r.repeats.failed : r?.status === 'errors' ? 1 : 0;
  const failed = notRun ? ABSENT : String(failedCount);
  const completed = notRun ? ABSENT : String(r?.repeats ? sent - failedCount : f ? 1 : 0);
  return [
    'Prefill', label, '1', r ? prefillStatus(r) : missing,
    formatPrefillRate(f?.promptTokensPerSecond, 1), ABSENT, formatMs(f?.ttftMs), ABSENT, ABSENT,
    completed, ABSENT, ABSENT, failed, ABSENT,
  ];
}

export function cellMeasurementRow(context: number, concurrency: number, cell: CellResult | undefined, missing: string): string[] {
  const head = ['Sustained decode', contextLabel(context), String(concurrency)];
  const f = cell?.figures;
  if (!cell || !f) return [...head, cell ? statusText(cell) : missing, ...Array<string>(10).fill(ABSENT)];
  return [
    ...head,
    `${statusText(cell)}${cell.serverCrossCheck?.disagree ? ' ⚠' : ''}`,
    formatRate(f.totalTokensPerSecond),
    formatRate(f.perRequestTokensPerSecond),
    formatMs(f.ttftMs?.median),
    formatMsPrecise(f.timeBetweenTokensMs?.median),
    formatRate(f.averageActiveRequests),
    formatCount(f.completedRequests),
    formatCount(f.outputTokens),
    formatSeconds(f.measuredForS),
    failedText(cell),
    `${formatRate(f.clientActiveRequests)}${f.activeRequestsDisagree ? ' ⚠' : ''}`,
  ];
}

/** `0`, or `0 (+4 resent)` when requests were resent on a fresh connection (not failures) */
function failedText(cell: CellResult): string {
  const failed = formatCount(cell.figures?.failedRequests);
  const resent = cell.evidence.connectionRetries?.count;
  return resent ? `${failed} (+${formatCount(resent)} resent)` : failed;
}

/** `total tok/s: server 350.2, client 388.1` for each disagreeing item of a cell's server cross-check. */
function crossCheckText(cell: CellResult): string {
  const names: Record<string, string> = { outputTokensPerSecond: 'total tok/s', ttftMedianMs: 'TTFT ms', perRequestTokensPerSecond: 'per request tok/s' };
  return (cell.serverCrossCheck?.items ?? [])
    .filter((i) => i.disagree)
    .map((i) => `${names[i.figure] ?? i.figure}: server ${formatNumber(i.server, 1)}, client ${formatNumber(i.client, 1)}`)
    .join(', ');
}

export const SPREAD_COLUMN = 'Spread over repeats';

/** `label ±x% · … (n runs)` for the labelled figures of a repeated cell or prefill row; — when measured once */
function repeatSpreadText(
  repeats: { count: number; spread: Partial<Record<string, FigureSpread>> } | undefined,
  labels: ReadonlyArray<readonly [figure: string, label: string]>,
): string {
  if (!repeats || repeats.count < 2) return ABSENT;
  const parts: string[] = [];
  for (const [figure, label] of labels) {
    const x = repeats.spread[figure]?.relativeHalfRange;
    if (x !== undefined) parts.push(`${label} ±${formatNumber(x * 100, 1)}%`);
  }
  return parts.length > 0 ? `${parts.join(' · ')} (${repeats.count} runs)` : ABSENT;
}

const CELL_SPREAD_LABELS = [['totalTokensPerSecond', 'tok/s'], ['perRequestTokensPerSecond', 'per request'], ['ttftMs', 'TTFT'], ['timeBetweenTokensMs', 'TBT']] as const;
const PREFILL_SPREAD_LABELS = [['promptTokensPerSecond', 'prompt tok/s'], ['ttftMs', 'TTFT']] as const;

/** `tok/s ±0.4% · per request ±0.2% · TTFT ±3.1% · TBT ±0.1% (3 runs)` from a repeated cell's spread. */
function spreadText(cell: CellResult | undefined): string {
  return repeatSpreadText(cell?.repeats, CELL_SPREAD_LABELS);
}

/** `prompt tok/s ±1.2% · TTFT ±1.3% (3 runs)` from a repeated prefill row's spread. */
function prefillSpreadText(r: PrefillRowResult | undefined): string {
  return repeatSpreadText(r?.repeats, PREFILL_SPREAD_LABELS);
}

/** Why requests failed, per Errors cell: the count by code and the first message (a server's text, escaped). */
export function errorNotes(cells: readonly CellResult[]): string[] {
  const failing = cells.filter((c) => c.evidence.errors && c.evidence.errors.count > 0);
  if (failing.length === 0) return [];
  const line = (c: CellResult): string => {
    const e = c.evidence.errors!;
    const codes = Object.entries(e.byCode)
      .map(([code, n]) => `${formatCount(n)} ${code}`)
      .join(', ');
    const first = e.firstMessage ? `; first: ${escapeText(e.firstMessage.length > 300 ? `${e.firstMessage.slice(0, 300)}…` : e.firstMessage)}` : '';
    return `- ${cellKey(c.context, c.concurrency)}: ${formatCount(e.count)} failed (${codes || 'no code'})${first}`;
  };
  return ['Failed requests, by cause:', '', ...failing.map(line), ''];
}

/** Words for each output-token source (figures.tokenSource). */
export const TOKEN_SOURCE_TEXT: Readonly<Record<CellFigures['tokenSource'], string>> = {
  usage: "server usage (cumulative usage on every chunk)",
  'chunk-token-ids': "the chunks' token ids",
  'local-tokenizer': 'the streamed text, with the local tokenizer (LLM_BENCH_TOKENIZER)',
  chunks: 'chunks, one token each (no usage, no token ids, no local tokenizer: a chunk with several tokens counts one)',
};

/** Where the measured cells' output tokens came from, weakest first when cells differ. */
function tokenSourceText(cells: readonly CellResult[]): string | undefined {
  const order: Array<CellFigures['tokenSource']> = ['chunks', 'local-tokenizer', 'chunk-token-ids', 'usage'];
  const seen = new Set(cells.flatMap((c) => (c.figures ? [c.figures.tokenSource] : [])));
  const list = order.filter((s) => seen.has(s));
  return list.length === 0 ? undefined : list.map((s) => TOKEN_SOURCE_TEXT[s]).join('; some cells: ');
}

/** Cells whose server usage disagreed with the streamed tokens (evidence.usageDisagrees). */
export function usageNotes(cells: readonly CellResult[]): string[] {
  const flagged = cells.filter((c) => c.evidence.usageDisagrees);
  if (flagged.length === 0) return [];
  const line = (c: CellResult): string => {
    const u = c.evidence.usageDisagrees!;
    const constant = u.constant ? ', the same usage whatever the length' : '';
    return `- ${cellKey(c.context, c.concurrency)}: ${formatCount(u.requests)} of ${formatCount(u.of)} requests (e.g. usage ${formatCount(u.example.usage)}, streamed ${formatCount(u.example.counted)}${constant})`;
  };
  return ["Server usage that disagrees with the streamed tokens (by more than max(2, 2 %)); the counts come from the stream:", '', ...flagged.map(line), ''];
}

/**
 * `12 closed after finish_reason without [DONE], 3 unterminated last event (of 40 completed)`; ''
 * when every stream ended normally. `code` formats `[DONE]` (a Markdown code span by default; the
 * HTML report passes its own).
 */
export function streamEndingsText(
  e: { done: number; closeAfterFinish: number; unterminatedLast: number },
  code: (text: string) => string = (t) => `\`${t}\``,
): string {
  const parts: string[] = [];
  if (e.closeAfterFinish > 0) parts.push(`${formatCount(e.closeAfterFinish)} closed after finish_reason without ${code('[DONE]')}`);
  if (e.unterminatedLast > 0) parts.push(`${formatCount(e.unterminatedLast)} unterminated last event`);
  if (parts.length === 0) return '';
  return `${parts.join(', ')} (of ${formatCount(e.done + e.closeAfterFinish + e.unterminatedLast)} completed)`;
}

/**
 * Streams that ended otherwise than by a complete `data: [DONE]` event, per cell (evidence
 * streamEndings): read as completed requests, so the page says how many and how.
 */
export function streamEndingNotes(cells: readonly CellResult[]): string[] {
  const seen = cells.filter((c) => c.evidence.streamEndings && streamEndingsText(c.evidence.streamEndings) !== '');
  if (seen.length === 0) return [];
  const list = seen.map((c) => `${cellKey(c.context, c.concurrency)}: ${streamEndingsText(c.evidence.streamEndings!)}`).join('; ');
  return [
    `Stream endings (${list}): the server closed the connection after the chunk with the finish reason without sending \`data: [DONE]\`, or sent \`data: [DONE]\` with no blank line after it before closing. Both were read as completed requests, as curl and most clients read them; a close before any finish reason, or a broken connection, is still a failure.`,
    '',
  ];
}

type RunningSource = NonNullable<NonNullable<CellResult['figures']>['runningFrom']>;

/** How each source of a cell's running figure reads on the page (figures.runningFrom). */
export const RUNNING_SOURCE_TEXT: Readonly<Record<RunningSource, string>> = {
  'decode-counters': "the server's decode counters (llama.cpp `n_decode_total` × `n_busy_slots_per_decode`)",
  samples: "the server's running-requests metric, sampled",
  slots: "the server's busy slots (llama.cpp `GET /slots`), sampled",
  client: "client-side timelines: the server exposes no running or waiting figure, so a request counts as waiting from its send to its first token and as running from its first to its last token",
};

/**
 * Where the cells' running figures came from (the figure Requests queued is judged on), one line
 * per source with its cells, and for client-side Requests queued cells the client's numbers.
 * Nothing when every measured cell used the server's running-requests metric.
 */
export function runningSourceNotes(cells: readonly CellResult[]): string[] {
  const measured = cells.filter((c) => c.figures?.runningFrom !== undefined);
  if (measured.length === 0 || measured.every((c) => c.figures!.runningFrom === 'samples')) return [];
  const bySource = new Map<RunningSource, string[]>();
  for (const c of measured) {
    const from = c.figures!.runningFrom!;
    bySource.set(from, [...(bySource.get(from) ?? []), cellKey(c.context, c.concurrency)]);
  }
  const out = ['Running requests (what Requests queued is judged on) came from:', ''];
  for (const [from, keys] of bySource) out.push(`- ${RUNNING_SOURCE_TEXT[from]}: ${keys.join(', ')}`);
  out.push('');
  const clientQueued = cells.filter((c) => c.evidence.queued?.source === 'client');
  if (clientQueued.length > 0) {
    const line = (c: CellResult): string => {
      const q = c.evidence.queued!;
      return `- ${cellKey(c.context, c.concurrency)}: at most ${formatCount(q.peakRunning)} of ${formatCount(q.concurrency)} ran at once, held there with requests waiting ${formatNumber((q.heldAtPeakShare ?? 0) * 100, 0)} % of the window (mean running ${formatRate(q.meanRunning)}, waiting ${formatRate(q.meanWaiting)})`;
    };
    out.push('Requests queued (client-side): the server never ran all requests at once and held its peak while others waited:', '', ...clientQueued.map(line), '');
  }
  return out;
}

/** Cells whose streams arrived bunched (evidence streamBuffered), with the burst evidence. */
export function bufferedNotes(cells: readonly CellResult[]): string[] {
  const flagged = cells.filter((c) => c.evidence.streamBuffered);
  if (flagged.length === 0) return [];
  const line = (c: CellResult): string => {
    const b = c.evidence.streamBuffered!;
    return (
      `- ${cellKey(c.context, c.concurrency)}: ${Math.round(b.zeroGapShare * 100)} % of ${formatCount(b.gaps)} gaps between a request's chunks under 0.5 ms; ` +
      `tokens per burst median ${formatCount(b.burstTokens.median)}, p90 ${formatCount(b.burstTokens.p90)}, largest ${formatCount(b.burstTokens.max)} ` +
      `(${formatCount(b.oneBurstRequests)} of ${formatCount(b.requests)} requests in one burst)`
    );
  };
  return [
    "Stream buffered on the way: the tokens arrived in bursts no engine produces (each of a request's chunks comes from its own decode step), so something between the server and the load generator held them, and the TTFT and time between tokens shown are its, not the server's:",
    '',
    ...flagged.map(line),
    '',
  ];
}

/** Figures a measured cell could not compute, with the reason (never a bare dash without one). */
export function notComputedNotes(cells: readonly CellResult[]): string[] {
  const lines: string[] = [];
  for (const c of cells) {
    const n = c.figures?.notComputed;
    if (!n) continue;
    if (n.timeBetweenTokensMs) lines.push(`- ${cellKey(c.context, c.concurrency)}: time between tokens and per-request tok/s: ${n.timeBetweenTokensMs}`);
    if (n.ttftMs) lines.push(`- ${cellKey(c.context, c.concurrency)}: TTFT: ${n.ttftMs}`);
  }
  return lines.length === 0 ? [] : ['Figures shown as — could not be computed:', '', ...lines, ''];
}

/** What the load's connections showed: requests resent after a stale keep-alive connection, a server that closes after each response. */
export function connectionNotes(cells: readonly CellResult[]): string[] {
  const out: string[] = [];
  const resent = cells.filter((c) => c.evidence.connectionRetries);
  if (resent.length > 0) {
    const list = resent.map((c) => `${cellKey(c.context, c.concurrency)}: ${formatCount(c.evidence.connectionRetries!.count)}`).join(', ');
    const why = resent.find((c) => c.evidence.connectionRetries?.firstReason)?.evidence.connectionRetries?.firstReason;
    out.push(
      `Resent (${list}): requests whose send on a reused keep-alive connection failed before any answer, because the server had closed it${why ? ` (${escapeText(why)})` : ''}; each was sent once more on a fresh connection. They are not failures, and their TTFT starts at the resend.`,
      '',
    );
  }
  const closing = cells.find((c) => c.connections?.serverClosesAfterResponse);
  if (closing) {
    const c = closing.connections!;
    out.push(
      `Connections: the server closes the connection after each streamed response although it offers keep-alive, so requests said \`Connection: close\` and each worker's next connection was opened as its stream ended (${cellKey(closing.context, closing.concurrency)}: ${formatCount(c.opened)} connections for ${formatCount(c.requests)} requests).`,
      '',
    );
  }
  return out;
}

function legendLine(seen: Set<CellStatus>): string | undefined {
  const parts = STATUS_LEGEND.filter(([s]) => seen.has(s)).map(([s, text]) => `${STATUS_LABELS[s]}: ${text}`);
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/** One Markdown table row; `|` and line breaks inside cells are escaped. */
export function markdownRow(cells: readonly string[]): string {
  return `| ${cells.map(escapeCell).join(' | ')} |`;
}

/** A table cell's (or our own list item's) text: `|` escaped, line breaks as spaces. Text from outside goes through escapeText first. */
export function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/**
 * Text that came from outside (a server's model id, version, error text, a file path) for a
 * Markdown heading, list item or table cell: on one line, with HTML (`<`, `>`, `&`) and the
 * characters that format Markdown (`\ * ` [ ] | ~`, and `_` at a word's edge) escaped, so it shows as written and can
 * neither format nor inject anything where the page is rendered (GitHub pages, PR comments, job
 * summaries). Line breaks of any kind become spaces.
 */
export function escapeText(text: string): string {
  return text
    .replace(/\r\n|[\r\n\u2028\u2029\u0085]/g, ' ')
    .replace(/[\\`*[\]|~]/g, (c) => `\\${c}`)
    // an underscore formats only at a word's edge (`_b_`); inside a word (`owned_by`) it is left as it is
    .replace(/(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, '\\_')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** An inline code span for text from outside (a path): on one line, fenced by more backticks than it holds. */
export function codeSpan(text: string): string {
  const flat = text.replace(/\r\n|[\r\n\u2028\u2029\u0085]/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** A fenced code block whose fence is longer than any backtick run in `text`, so the text cannot close it. */
export function codeBlock(text: string, lang = ''): string[] {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}${lang}`, text, fence];
}

function sortedUnique(xs: readonly number[]): number[] {
  return [...new Set(xs)].sort((a, b) => a - b);
}

function isText(x: string | undefined): x is string {
  return x !== undefined && x !== '';
}
