/**
 * The run's description, as every page shows it: the summary line under the title and the
 * Hardware, Engine and Run sections (label, value; an absent value is left out by the page).
 */
import { formatCount, formatNumber } from '../text/format.js';
import { contextLabel } from '../shapes/labels.js';
import type { CellResult, RunInfo, SpeedMatrixResult, WorkloadInfo } from '../shapes/result.js';
import type { CellFigures } from '../shapes/result.gen.js';
import { isText, rateSettingsText, rateText, runWorkload, sortedUnique } from './view.js';

/**
 * `<engine> · <version> · <quantization> · N contexts (min–max) × M concurrency levels (min–max) · prefill at …`;
 * a workload run's one row is named by its workload (a file's row is context 0 only nominally: docs/workloads.md).
 */
export function summaryLine(info: RunInfo): string {
  const contexts = sortedUnique(info.run.contexts);
  const levels = sortedUnique(info.run.concurrency);
  const parts = [info.engine.engine, info.engine.version, info.engine.quantization].filter(isText);
  const workload = runWorkload(info);
  const rows = workload
    ? `1 workload row (${workload.kind === 'file' ? workload.file?.name ?? 'file' : `${workload.kind}, ${contexts.map(contextLabel).join(', ')}`})`
    : countRange(contexts.length, 'context', 'contexts', contexts.map(contextLabel));
  parts.push(`${rows} × ${countRange(levels.length, 'concurrency level', 'concurrency levels', levels.map(String))}`);
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
    ['Workload', workloadItem(runWorkload(result.info))],
    ['Open-loop rates', run.rates ? `${run.rates.sweep ? `a sweep of ${run.rates.sweep.points} rates from the synchronous rate to the throughput limit` : `${run.rates.rates.map(rateText).join(', ')} requests/s`} per context: ${rateSettingsText(result)}` : undefined],
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
        ? `${result.info.resumedFrom.path} (started ${result.info.resumedFrom.startedAt}): ${countOf([...result.cells, ...result.prefill].filter((x) => x.resumed).length, 'cell or row', 'cells and rows')} kept, the rest measured in this run`
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
  if (result.info.run.prefillContexts.length === 0) return 'None (no prefill rows)';
  if (mode === 'separate') return 'Separate cold request per context';
  if (mode === 'measured-during-decode-warm-up') return 'Measured during decode warm-up';
  const contexts = new Set(result.info.run.contexts);
  const rows = sortedUnique(result.info.run.prefillContexts);
  const warm = rows.filter((c) => contexts.has(c)).map(contextLabel);
  const cold = rows.filter((c) => !contexts.has(c)).map(contextLabel);
  return `Measured during decode warm-up (${warm.join(', ')}); separate cold request (${cold.join(', ')})`;
}

/** Words for each output-token source (figures.tokenSource). */
export const TOKEN_SOURCE_TEXT: Readonly<Record<CellFigures['tokenSource'], string>> = {
  usage: "server usage (cumulative usage on every chunk)",
  'chunk-token-ids': "the chunks' token ids",
  'local-tokenizer': 'the streamed text, with the local tokenizer (LLM_BENCH_TOKENIZER)',
  chunks: 'chunks, one token each (no usage on each chunk, no token ids, no local tokenizer: a chunk with several tokens counts one; a final usage, where the server sends one, checks the count)',
};

/** Where the measured cells' output tokens came from, weakest first when cells differ. */
function tokenSourceText(cells: readonly CellResult[]): string | undefined {
  const order: Array<CellFigures['tokenSource']> = ['chunks', 'local-tokenizer', 'chunk-token-ids', 'usage'];
  const seen = new Set(cells.flatMap((c) => (c.figures ? [c.figures.tokenSource] : [])));
  const list = order.filter((s) => seen.has(s));
  return list.length === 0 ? undefined : list.map((s) => TOKEN_SOURCE_TEXT[s]).join('; some cells: ');
}

/** The Run section's workload line: absent for the synthetic one (the method's own prompts). */
function workloadItem(w: WorkloadInfo | undefined): string | undefined {
  if (!w) return undefined;
  return w.file ? `${w.text} (sha256 ${w.file.sha256.slice(0, 12)}…)` : w.text;
}

/** "1 cell", "2 cells" */
function countOf(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
