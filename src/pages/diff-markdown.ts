/**
 * Pure: a Comparison (and the two runs' info) → the Markdown diff page: verdict counts, the
 * regressions, a total tok/s grid with the change per cell, and every compared figure.
 */
import { formatValue } from '../judge/thresholds.js';
import { cellKey, contextLabel } from '../shapes/labels.js';
import { codeSpan, escapeCell, escapeText, markdownRow as row } from '../text/escape.js';
import type { RunInfo } from '../shapes/result.js';
import { formatChange, toleranceNote, type Comparison, type FigureDelta, type RowComparison, type Verdict } from '../judge/compare.js';
import type { CapacityDelta, RateCapacityDelta } from '../judge/compare-capacity.js';
import { bindingText, capacityRpsText, capacityUsersText, formatRps } from '../text/capacity-line.js';
import { RATE_STATUS_LABELS, shortStatusWords, STATUS_LABELS } from './view.js';
import { appendAll } from '../extent.js';
import { cutText, HEADING_MAX_CHARS } from '../text/format.js';

export const VERDICT_LABELS: Record<Verdict, string> = {
  improved: 'Improved',
  regressed: 'Regressed',
  'within-noise': 'Within noise',
  missing: 'Missing',
};

export interface DiffPageInput {
  base: RunInfo;
  next: RunInfo;
  comparison: Comparison;
  /** shown as where each side came from, e.g. file paths */
  baseLabel?: string;
  nextLabel?: string;
}

export function renderDiffMarkdown(input: DiffPageInput): string {
  const { comparison: c } = input;
  const out: string[] = ['# Speed matrix comparison', ''];
  out.push(`- **Baseline**: ${describe(input.base, input.baseLabel)}`, `- **New**: ${describe(input.next, input.nextLabel)}`, '');
  const failing = c.failures.length;
  out.push(
    `**${failing === 0 ? 'Pass' : `Fail: ${failing} regression${failing === 1 ? '' : 's'}`}** · ` +
      `${c.counts.regressed} regressed · ${c.counts.improved} improved · ${c.counts['within-noise']} within noise · ${c.counts.missing} missing`,
    '',
  );
  if (failing > 0) {
    // a regressed cell whose status changed too (Valid → Errors): said with its regressions
    const changed = [...c.prefill, ...c.cells, ...c.rates].filter((r) => r.figures.some((f) => f.fails) && statusChange(r, '-') !== '');
    const notes = changed.map((r) => `- ${r.kind === 'prefill' ? 'prefill ' : ''}${r.key}${r.kind === 'rate' ? '/s' : ''}: its status changed too, ${escapeCell(statusChange(r, ''))}`);
    appendAll(out, ['## Regressions', '', ...c.failures.map((f) => `- ${escapeCell(f)}`), ...notes, '']);
  }

  const improved = [...c.prefill, ...c.cells, ...c.rates].flatMap((r) => r.figures.filter((f) => f.verdict === 'improved').map((f) => [r, f] as const));
  if (improved.length > 0) {
    out.push('## Improvements', '');
    for (const [r, f] of improved) {
      out.push(`- ${r.kind === 'prefill' ? 'prefill ' : ''}${r.key}${r.kind === 'rate' ? '/s' : ''} ${f.figure} ${formatValue(f.next!)} vs baseline ${formatValue(f.base!)}: ${formatChange(f.change!)}${statusChange(r, ' (', ')')}`);
    }
    out.push('');
  }

  appendAll(out, capacityLines(c, input.next));
  appendAll(out, rateCapacityLines(c, input.next));
  appendAll(out, gridLines(c.cells));
  appendAll(out, rateLines(c.rates));
  if (c.rateSweepNote) out.push(escapeText(c.rateSweepNote), '');
  out.push('## All compared figures', '');
  out.push(row(['Phase', 'Context', 'Requests at once', 'Figure', 'Baseline', 'New', 'Change', 'Allowed', 'Verdict']));
  out.push(row(Array<string>(9).fill('---')));
  for (const r of [...c.prefill, ...c.cells]) {
    for (const f of r.figures) out.push(row(figureRow(r, f)));
    if (r.figures.length === 0) {
      out.push(row([phase(r), contextLabel(r.context), r.concurrency === undefined ? '1' : String(r.concurrency), '—', status(r.baseStatus), status(r.nextStatus), '—', '—', '—']));
    }
  }
  out.push('');
  out.push(
    'A figure regressed when it moved the wrong way (tok/s down, latencies up) by more than its tolerance plus the ' +
      'relative spread (half the range over the median) of repeated measurements on both sides, and by more than its absolute floor. ' +
      'Tolerances: src/thresholds/tolerances.ts, overridden by `tolerances.regression` in the threshold file.',
    '',
  );
  return out.join('\n');
}

/** The open-loop rate cells, figure by figure; [] when neither run has any. */
function rateLines(rates: RowComparison[]): string[] {
  if (rates.length === 0) return [];
  const out = ['## Open-loop rate cells', '', 'Per context and configured rate (requests/s; the rate offered in each window is on each run\'s page): the status, and the achieved rate, total tok/s, TTFT from the schedule (median, p99) and time between tokens (median), baseline → new.', ''];
  out.push(row(['Context', 'Rate', 'Status', 'Figure', 'Baseline', 'New', 'Change', 'Allowed', 'Verdict']), row(Array<string>(9).fill('---')));
  for (const r of rates) {
    const lead = [contextLabel(r.context), `${r.rate} req/s`, r.baseStatus === r.nextStatus ? status(r.nextStatus) : `${status(r.baseStatus)} → ${status(r.nextStatus)}`];
    for (const f of r.figures) out.push(row([...lead, ...figureRow(r, f).slice(3)]));
    if (r.figures.length === 0) out.push(row([...lead, '—', '—', '—', '—', '—', escapeCell(r.note ?? '—')]));
  }
  out.push('');
  return out;
}

function describe(info: RunInfo, label: string | undefined): string {
  const repeat = info.run.repeat && info.run.repeat > 1 ? ` · ${info.run.repeat} repeats` : '';
  return `${label ? `${codeSpan(label)} · ` : ''}${escapeText(cutText(info.title, HEADING_MAX_CHARS))} · started ${escapeText(info.startedAt)}${repeat}`;
}

function gridLines(cells: RowComparison[]): string[] {
  if (cells.length === 0) return [];
  const contexts = [...new Set(cells.map((r) => r.context))].sort((a, b) => a - b);
  const levels = [...new Set(cells.map((r) => r.concurrency!))].sort((a, b) => a - b);
  const byKey = new Map(cells.map((r) => [r.key, r]));
  const out = ['## Total tok/s', '', 'Baseline → new, change and verdict per cell.', ''];
  out.push(row(['Context', ...levels.map(String)]), row(['---', ...levels.map(() => '---')]));
  for (const context of contexts) {
    out.push(row([contextLabel(context), ...levels.map((c) => gridCell(byKey.get(cellKey(context, c))))]));
  }
  out.push('');
  return out;
}

function gridCell(r: RowComparison | undefined): string {
  if (!r) return '—';
  const f = r.figures.find((x) => x.figure === 'totalTokensPerSecond');
  if (!f) return r.baseStatus === r.nextStatus ? status(r.nextStatus) : `${status(r.baseStatus)} → ${status(r.nextStatus)}`;
  if (f.change === undefined) return `${value(f.base)} → ${value(f.next)} · Missing${statusChange(r, ' · ')}`;
  const text = `${formatValue(f.base!)} → ${formatValue(f.next!)} (${formatChange(f.change)})`;
  // a cell whose status changed (a baseline cell with failed requests, say) is not a like-for-like change
  const verdict = f.verdict === 'regressed' ? `**${text} Regressed**` : f.verdict === 'improved' ? `${text} Improved` : text;
  return `${verdict}${statusChange(r, ' · ')}`;
}

/**
 * `Errors (32) → Valid` where the two runs' status words of a row differ (every status of a decode
 * cell, and its failed requests, as its page writes them), between `open` and `close`; '' where they agree.
 */
function statusChange(r: RowComparison, open: string, close = ''): string {
  const before = r.baseCell ? shortStatusWords(r.baseCell) : status(r.baseStatus);
  const after = r.nextCell ? shortStatusWords(r.nextCell) : status(r.nextStatus);
  return before === after ? '' : `${open}${before} → ${after}${close}`;
}

function figureRow(r: RowComparison, f: FigureDelta): string[] {
  return [
    phase(r),
    contextLabel(r.context),
    r.concurrency === undefined ? '1' : String(r.concurrency),
    f.figure,
    value(f.base),
    value(f.next),
    f.change === undefined ? '—' : formatChange(f.change),
    toleranceNote(f.figure, f.tolerance, f.spread).slice(1, -1),
    f.verdict === 'regressed' ? `**${VERDICT_LABELS.regressed}**` : VERDICT_LABELS[f.verdict] + (f.fails ? ' (fails)' : ''),
  ];
}

function phase(r: RowComparison): string {
  return r.kind === 'prefill' ? 'Prefill' : r.kind === 'rate' ? 'Open-loop rate' : 'Sustained decode';
}

/** a status in the pages' words (view.ts): a decode cell's or prefill row's, else a rate cell's */
function status(s: string | undefined): string {
  if (s === undefined) return STATUS_LABELS['not-run'];
  return (STATUS_LABELS as Record<string, string>)[s] ?? (RATE_STATUS_LABELS as Record<string, string>)[s] ?? s;
}

function value(x: number | undefined): string {
  return x === undefined ? '—' : formatValue(x);
}

const CAPACITY_VERDICTS: Record<CapacityDelta['verdict'], string> = {
  improved: 'Improved',
  regressed: '**Regressed**',
  'within-noise': 'Within noise',
  'not-comparable': 'Not compared',
};

/** Capacity at the SLO per context, baseline → new (runs with an SLO). */
function capacityLines(c: Comparison, next: RunInfo): string[] {
  if (c.capacityNote) return ['## Capacity at the SLO', '', escapeText(c.capacityNote), ''];
  if (c.capacity.length === 0) return [];
  const users = (r: CapacityDelta['base']) => (r ? capacityUsersText(r) : '—');
  const out = ['## Capacity at the SLO', '', `Users at once per context at ${codeSpan(next.run.slo?.text ?? '')}, baseline → new.`, ''];
  out.push(row(['Context', 'Baseline', 'New', 'Allowed drop', 'Binds (new)', 'Verdict']), row(Array<string>(6).fill('---')));
  for (const d of c.capacity) {
    const binds = d.next?.binding && !d.next.atLeast ? bindingText(d.next.binding, d.next.bindingConcurrency) : '—';
    const verdict = CAPACITY_VERDICTS[d.verdict] + (d.verdict === 'not-comparable' && d.message ? `: ${d.message}` : '');
    out.push(row([d.contextLabel, users(d.base), users(d.next), d.allowed === undefined ? '—' : String(Number(d.allowed.toFixed(1))), escapeCell(binds), escapeCell(verdict)]));
  }
  out.push('');
  return out;
}

/** The highest open-loop rate at the SLO per context, baseline → new; [] when neither run searched one. */
function rateCapacityLines(c: Comparison, next: RunInfo): string[] {
  const title = '## Highest rate at the SLO';
  if (c.rateCapacityNote) return [title, '', escapeText(c.rateCapacityNote), ''];
  if (!c.rateCapacity || c.rateCapacity.length === 0) return [];
  const rps = (r: RateCapacityDelta['base']) => (r ? capacityRpsText(r) : '—');
  const out = [title, '', `Open-loop requests/s per context at ${codeSpan(next.run.slo?.text ?? '')}, baseline → new.`, ''];
  out.push(row(['Context', 'Baseline', 'New', 'Allowed drop', 'Binds (new)', 'Verdict']), row(Array<string>(6).fill('---')));
  for (const d of c.rateCapacity) {
    const binds = d.next?.binding && !d.next.atLeast ? `${bindingText(d.next.binding)}${d.next.bindingRate !== undefined ? ` at ${formatRps(d.next.bindingRate)}` : ''}` : '—';
    const verdict = CAPACITY_VERDICTS[d.verdict] + (d.verdict === 'not-comparable' && d.message ? `: ${d.message}` : '');
    out.push(row([d.contextLabel, rps(d.base), rps(d.next), d.allowed === undefined ? '—' : formatRps(d.allowed), escapeCell(binds), escapeCell(verdict)]));
  }
  out.push('');
  return out;
}
