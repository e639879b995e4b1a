/**
 * One cell's detail view in the HTML report (shown when its anchor is the page's target): its
 * figures, the spread of its repeats, the server's cross-check, the server's metrics through the
 * window, each request's time between tokens and every gap between tokens, its evidence.
 */
import { cellKey, contextLabel } from '../shapes/labels.js';
import { formatCount, formatMs, formatNumber, formatRate } from '../text/format.js';
import { distText, goodputText, itlText, longestGapText, statusWords, streamEndingsText } from './view.js';
import type { CellResult, GapHistogram } from '../shapes/result.js';
import { STATUS_COLORS, table } from './html-frame.js';
import { escapeHtml } from '../text/escape.js';
import { appendAll } from '../extent.js';
import { chosenPercentileItems } from './markdown-rows.js';
import { binnedHistogram, histogram, lineChart, PALETTE, type Series } from './svg.js';

/** `#cell-8K-16` */
export function cellAnchor(context: number, concurrency: number): string {
  return `cell-${contextLabel(context)}-${concurrency}`;
}

/** One cell's detail view (shown when its anchor is the page's target). */
export function cellDetail(cell: CellResult, percentiles: readonly number[] | undefined): string {
  const key = cellKey(cell.context, cell.concurrency);
  const f = cell.figures;
  const out: string[] = [`<section class="cell-detail" id="${cellAnchor(cell.context, cell.concurrency)}" data-cell="${escapeHtml(key)}">`];
  const color = STATUS_COLORS[cell.status];
  out.push(
    `<h3>${escapeHtml(key)}${cell.adaptive ? ' (capacity search)' : ''} <span class="status" style="background:${color.fill};color:${color.text}">${escapeHtml(statusWords(cell))}</span> <a href="#chart-heatmap">back to the grid</a></h3>`,
  );
  if (cell.notRunReason) out.push(`<p>${escapeHtml(cell.notRunReason)}</p>`);
  if (f) {
    const items: Array<[string, string]> = [
      ['Total tok/s', formatRate(f.totalTokensPerSecond)],
      ['Per-request tok/s', formatRate(f.perRequestTokensPerSecond)],
      ['TTFT median / p90 / p99', f.ttftMs ? `${formatMs(f.ttftMs.median)} / ${formatMs(f.ttftMs.p90)} / ${formatMs(f.ttftMs.p99)}` : '—'],
      ['Time between tokens median / p90 / p99', f.timeBetweenTokensMs ? `${formatNumber(f.timeBetweenTokensMs.median, 1)} / ${formatNumber(f.timeBetweenTokensMs.p90, 1)} / ${formatNumber(f.timeBetweenTokensMs.p99, 1)} ms` : '—'],
      ['Inter-token latency median / p90 / p95 / p99 / max', itlText(f.interTokenLatencyMs)],
      ['Longest gap', f.longestGap ? longestGapText(f.longestGap) : '—'],
      ['TPOT median / p90 / p99', distText(f.tpotMs, 1)],
      ['End-to-end latency median / p90 / p99', f.e2eLatencyMs ? `${formatMs(f.e2eLatencyMs.median)} / ${formatMs(f.e2eLatencyMs.p90)} / ${formatMs(f.e2eLatencyMs.p99)}` : '—'],
      ['Completed requests/s', formatNumber(f.requestsPerSecond, 2)],
      ['Average active requests', formatRate(f.averageActiveRequests)],
      ['Completed requests', formatNumber(f.completedRequests, 0)],
      ['Failed requests', formatNumber(f.failedRequests, 0)],
      ['Output tokens', formatNumber(f.outputTokens, 0)],
      ['Measured for', `${formatNumber(f.measuredForS, 1)} s`],
    ];
    // LLM_BENCH_PERCENTILES: every latency at the run's chosen percentiles
    appendAll(items, chosenPercentileItems(f, percentiles));
    if (cell.goodput) items.push(['Goodput', goodputText(cell)]);
    if (cell.slo) items.push(['SLO', cell.slo.meets ? 'met' : `missed: ${cell.slo.binding?.detail ?? ''}`]);
    out.push(table(['Figure', 'Value'], items.map(([k, v]) => [escapeHtml(k), escapeHtml(v)]), [0]));
  }
  if (cell.repeats && cell.repeats.count > 1) {
    const spread = Object.entries(cell.repeats.spread ?? {}).map(([figure, s]) => [
      escapeHtml(figure),
      escapeHtml((s?.values ?? []).map((v) => formatNumber(v, 1)).join(', ')),
      escapeHtml(`± ${formatNumber((s?.relativeHalfRange ?? 0) * 100, 1)} %`),
    ]);
    out.push(`<h4>Spread over ${cell.repeats.count} repeats</h4>`, table(['Figure', 'Repeats', 'Half range / median'], spread, [0, 1]));
  }
  if (cell.serverCrossCheck) {
    out.push(
      '<h4>Server cross-check</h4>',
      table(
        ['Figure', 'Server', 'Client', 'Source', 'Disagree'],
        cell.serverCrossCheck.items.map((i) => [escapeHtml(i.figure), formatNumber(i.server, 1), formatNumber(i.client, 1), escapeHtml(i.source), i.disagree ? '⚠ yes' : 'no']),
        [0, 3],
      ),
    );
  }
  const metrics = cell.series?.metrics;
  if (metrics && metrics.atS.length > 0) {
    const line = (name: 'running' | 'waiting', color: string): Series => ({
      name,
      color,
      points: metrics.atS.map((t, i) => ({ x: t, y: metrics[name]?.[i] ?? null })),
    });
    const series = [metrics.running ? line('running', PALETTE[0]) : undefined, metrics.waiting ? line('waiting', PALETTE[1]) : undefined].filter((s): s is Series => s !== undefined);
    if (metrics.kvUsage) {
      // KV usage (0..1) drawn in % on the same axis as the request counts
      series.push({ name: 'KV usage %', color: PALETTE[2], dash: '4 3', points: metrics.atS.map((t, i) => ({ x: t, y: metrics.kvUsage![i] == null ? null : metrics.kvUsage![i]! * 100 })) });
    }
    out.push(
      lineChart({
        name: 'metrics',
        key: `metrics-${cellAnchor(cell.context, cell.concurrency)}`,
        markers: false,
        title: `${key}: server metrics in the window`,
        description: 'Running and waiting requests as the server reported them (KV usage in % of its cache), sampled through the window.',
        x: { title: 'Time since the window opened (s)' },
        y: { title: 'Requests (KV usage: %)' },
        series,
        legend: series.map((s) => ({ name: s.name, color: s.color, ...(s.dash ? { dash: s.dash } : {}) })),
      }),
    );
  }
  const tbt = cell.series?.requestTbtMs ?? [];
  if (tbt.length > 0) {
    out.push(
      histogram({
        name: 'tbt',
        key: `tbt-${cellAnchor(cell.context, cell.concurrency)}`,
        title: `${key}: time between tokens per request`,
        description: `Each request’s mean time between tokens in the window (${tbt.length} requests); the cell’s TBT figures are quantiles of these.`,
        x: { title: 'Time between tokens (ms)' },
        y: { title: 'Requests' },
        values: tbt,
        color: PALETTE[0],
      }),
    );
  }
  const gaps = cell.series?.gapHistogram;
  if (gaps) out.push(gapChart(key, cellAnchor(cell.context, cell.concurrency), gaps));
  const endings = cell.evidence.streamEndings ? streamEndingsText(cell.evidence.streamEndings, (t) => `<code>${escapeHtml(t)}</code>`) : '';
  if (endings !== '') out.push(`<p class="note">Stream endings: ${endings}; read as completed requests.</p>`);
  if (Object.keys(cell.evidence).length > 0) out.push('<h4>Evidence</h4>', `<pre>${escapeHtml(JSON.stringify(cell.evidence, null, 2))}</pre>`);
  out.push('</section>');
  return out.join('\n');
}

/** A cell's gaps between tokens, binned (figures ITL and longest gap are over the same gaps). */
function gapChart(key: string, anchor: string, h: GapHistogram): string {
  const edges = h.edgesMs;
  const bins = h.counts.map((count, i) => ({ lo: i === 0 ? edges[0]! / 2 : edges[i - 1]!, hi: i < edges.length ? edges[i]! : edges[edges.length - 1]! * 2, count }));
  const total = h.counts.reduce((a, b) => a + b, 0);
  return binnedHistogram({
    name: 'gaps',
    key: `gaps-${anchor}`,
    title: `${key}: every gap between tokens`,
    description: `The ${formatCount(total)} gaps between consecutive token chunks of a request in the window (a repeated cell's: every repeat's), binned on log axes so one long stall beside many short gaps still shows; the ITL figures are quantiles of the same gaps.`,
    x: { title: 'Gap (ms)' },
    y: { title: 'Gaps' },
    bins,
    color: PALETTE[3],
  });
}

