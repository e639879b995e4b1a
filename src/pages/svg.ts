/**
 * Pure: charts as SVG text, written when the report is built (no charting library, no script in
 * the page; why: docs/charting.md). Line charts (linear or log axes, point labels, gaps for missing
 * values), a heat map and a histogram. Every data mark has class `mark`, every chart sits in a
 * `<figure class="chart" data-chart="NAME">` with a title, a description and axis titles with units.
 */
import { escapeHtml } from '../text/escape.js';
import { maxOf, minOf } from '../extent.js';

/** Okabe–Ito: distinguishable with the common colour-vision deficiencies (yellow left out: too light on white). */
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#D55E00', '#CC79A7', '#56B4E9', '#000000', '#999933'] as const;
/** line styles that tell a second dimension apart without colour */
export const DASHES = ['', '6 3', '2 2', '8 3 2 3', '1 4', '10 4'] as const;

export interface Axis {
  title: string;
  log?: boolean;
  /** log base (ticks at its powers); 10 by default */
  base?: number;
  /** tick positions; chosen from the data when absent */
  ticks?: number[];
  min?: number;
  /** tick text (default: tickText) */
  format?: (n: number) => string;
}

export interface Point {
  x: number | null | undefined;
  y: number | null | undefined;
  /** drawn beside the point (Pareto: the concurrency) */
  label?: string;
  /** tooltip */
  title?: string;
  /** a point marked on its line (the knee of a latency curve): a ring around it and this text beside it */
  knee?: string;
  /** a point whose figures the tool does not trust (a Client-limited cell): drawn as a ring, not a dot */
  hollow?: boolean;
}

export interface Series {
  name: string;
  color: string;
  dash?: string;
  /** data attributes on the series group, e.g. { run: '0', context: '8K' } */
  data?: Record<string, string>;
  points: Point[];
}

export interface LegendItem {
  name: string;
  color: string;
  dash?: string;
  box?: boolean;
}

export interface LineChartSpec {
  name: string;
  /** the element id's suffix when the chart appears more than once on a page (default: name) */
  key?: string;
  title: string;
  description: string;
  x: Axis;
  y: Axis;
  series: Series[];
  legend?: LegendItem[];
  labels?: boolean;
  /** false: lines only (time series) */
  markers?: boolean;
  width?: number;
  height?: number;
}

const px = (n: number): string => String(Math.round(n * 10) / 10);

/** 1234 → "1,234"; 12345 → "12.3k"; 0.25 → "0.25" */
export function tickText(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e6) return `${Number((n / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((n / 1e3).toPrecision(3))}k`;
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  return String(Number(n.toPrecision(3)));
}

/** a tick with the decimals its axis's step needs (0.25 steps: 0.25, 0.50 …), else tickText */
function stepText(n: number, digits: number | undefined): string {
  if (digits === undefined || digits === 0 || Math.abs(n) >= 1e4) return tickText(n);
  return n.toFixed(Math.min(digits, 6));
}

interface Scale {
  at(v: number): number;
  ticks: number[];
  /** decimals that tell this axis's ticks apart (linear axes) */
  digits?: number;
}

function niceStep(span: number, count: number): number {
  const raw = span / count;
  const p = 10 ** Math.floor(Math.log10(raw));
  const e = raw / p;
  return (e >= 7.5 ? 10 : e >= 3.5 ? 5 : e >= 1.5 ? 2 : 1) * p;
}

function scale(axis: Axis, values: number[], from: number, to: number): Scale {
  if (axis.log) {
    const base = axis.base ?? 10;
    const lg = (v: number) => Math.log(v) / Math.log(base);
    const vals = values.length > 0 ? values : [1, base];
    const a = Math.floor(lg(minOf(vals)));
    const z = Math.max(a + 1, Math.ceil(lg(maxOf(vals))));
    let ticks = axis.ticks ?? Array.from({ length: z - a + 1 }, (_, i) => base ** (a + i));
    // two decades or less: 1, 2, 5 in each, so a short axis still reads
    if (!axis.ticks && base === 10 && z - a <= 2) ticks = ticks.flatMap((t, i) => (i < ticks.length - 1 ? [t, 2 * t, 5 * t] : [t]));
    const lo = Math.min(lg(minOf([...vals, ...ticks])), a);
    const hi = Math.max(lg(maxOf([...vals, ...ticks])), z);
    return { ticks, at: (v) => from + ((lg(v) - lo) / (hi - lo || 1)) * (to - from) };
  }
  const vals = values.length > 0 ? values : [0, 1];
  let lo = minOf([axis.min ?? 0, ...vals]);
  let hi = maxOf(vals);
  if (hi === lo) hi = lo + 1;
  const step = niceStep(hi - lo, 5);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  const ticks = axis.ticks ?? Array.from({ length: Math.round((hi - lo) / step) + 1 }, (_, i) => Number((lo + i * step).toPrecision(12)));
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  return { ticks, digits, at: (v) => from + ((v - lo) / (hi - lo || 1)) * (to - from) };
}

const MARGIN = { left: 70, right: 130, top: 30, bottom: 46 };

function frame(name: string, width: number, height: number, title: string, description: string, body: string, key?: string): string {
  // ids are unique on the page: a chart drawn once per cell carries the cell in its key
  const id = `chart-${key ?? name}`;
  return (
    `<figure class="chart" data-chart="${escapeHtml(name)}" id="${escapeHtml(id)}">` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-t ${id}-d">` +
    `<title id="${id}-t">${escapeHtml(title)}</title><desc id="${id}-d">${escapeHtml(description)}</desc>` +
    `<text x="${width / 2}" y="18" text-anchor="middle" class="chart-title" aria-hidden="true">${escapeHtml(title)}</text>${body}</svg>` +
    `<figcaption>${escapeHtml(description)}</figcaption></figure>`
  );
}

function axes(xs: Scale, ys: Scale, x: Axis, y: Axis, width: number, height: number): string {
  const out: string[] = ['<g class="grid" aria-hidden="true">'];
  for (const t of ys.ticks) out.push(`<line x1="${MARGIN.left}" x2="${width - MARGIN.right}" y1="${px(ys.at(t))}" y2="${px(ys.at(t))}"/>`);
  out.push('</g><g class="axis" aria-hidden="true">');
  out.push(`<path d="M${MARGIN.left},${MARGIN.top}V${height - MARGIN.bottom}H${width - MARGIN.right}" fill="none"/>`);
  const xt = x.format ?? ((n: number) => stepText(n, xs.digits));
  const yt = y.format ?? ((n: number) => stepText(n, ys.digits));
  for (const t of ys.ticks) out.push(`<text x="${MARGIN.left - 6}" y="${px(ys.at(t) + 4)}" text-anchor="end">${escapeHtml(yt(t))}</text>`);
  // a tick label too close to the one before it is left out (123K beside 128K)
  let lastX = -Infinity;
  for (const t of xs.ticks) {
    const at = xs.at(t);
    if (at - lastX < 7 * Math.max(2, xt(t).length)) continue;
    lastX = at;
    out.push(`<text x="${px(at)}" y="${height - MARGIN.bottom + 16}" text-anchor="middle">${escapeHtml(xt(t))}</text>`);
  }
  out.push(`<text x="${px((MARGIN.left + width - MARGIN.right) / 2)}" y="${height - 8}" text-anchor="middle" class="axis-title">${escapeHtml(x.title)}</text>`);
  out.push(`<text transform="translate(16 ${px((MARGIN.top + height - MARGIN.bottom) / 2)}) rotate(-90)" text-anchor="middle" class="axis-title">${escapeHtml(y.title)}</text></g>`);
  return out.join('');
}

function legendSvg(items: readonly LegendItem[] | undefined, x: number, y: number): string {
  if (!items || items.length === 0) return '';
  const rows = items.map((item, i) => {
    const yy = y + i * 16;
    const swatch = item.box
      ? `<rect x="${x}" y="${yy - 9}" width="14" height="11" fill="${item.color}"/>`
      : `<line x1="${x}" x2="${x + 20}" y1="${yy - 4}" y2="${yy - 4}" stroke="${item.color}" stroke-width="2"${item.dash ? ` stroke-dasharray="${item.dash}"` : ''}/>`;
    return `${swatch}<text x="${x + 25}" y="${yy}">${escapeHtml(item.name)}</text>`;
  });
  return `<g class="legend">${rows.join('')}</g>`;
}

/** a point is drawn when both values are finite (and positive on a log axis); others break the line */
function drawable(v: number | null | undefined, axis: Axis): v is number {
  return v !== null && v !== undefined && Number.isFinite(v) && (!axis.log || v > 0);
}

function dataAttributes(data: Record<string, string> | undefined): string {
  return Object.entries(data ?? {})
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join('');
}

export function lineChart(spec: LineChartSpec): string {
  const width = spec.width ?? 640;
  const height = spec.height ?? 340;
  const ok = (p: Point) => drawable(p.x, spec.x) && drawable(p.y, spec.y);
  const all = spec.series.flatMap((s) => s.points.filter(ok)) as Array<Point & { x: number; y: number }>;
  const xs = scale(spec.x, all.map((p) => p.x), MARGIN.left, width - MARGIN.right);
  const ys = scale(spec.y, all.map((p) => p.y), height - MARGIN.bottom, MARGIN.top);
  const out: string[] = [axes(xs, ys, spec.x, spec.y, width, height)];
  for (const s of spec.series) {
    let d = '';
    let pen = false;
    for (const p of s.points) {
      if (!ok(p)) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${px(xs.at(p.x as number))},${px(ys.at(p.y as number))}`;
      pen = true;
    }
    out.push(`<g class="series"${dataAttributes(s.data)}><title>${escapeHtml(s.name)}</title>`);
    // without point markers (a time series) the line itself is the series' mark
    const lineClass = spec.markers === false ? ' class="mark"' : '';
    if (d) out.push(`<path${lineClass} d="${d}" fill="none" stroke="${s.color}" stroke-width="1.6"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    for (const p of s.points) {
      if (!ok(p)) continue;
      const cx = px(xs.at(p.x as number));
      const cy = px(ys.at(p.y as number));
      if (spec.markers !== false) {
        const fill = p.hollow ? `fill="white" stroke="${s.color}" stroke-width="1.5" data-hollow="true"` : `fill="${s.color}"`;
        out.push(`<circle class="mark" cx="${cx}" cy="${cy}" r="3" ${fill}>${p.title ? `<title>${escapeHtml(p.title)}</title>` : ''}</circle>`);
      }
      if (spec.labels && p.label) out.push(`<text class="point-label" x="${px(Number(cx) + 5)}" y="${px(Number(cy) - 5)}">${escapeHtml(p.label)}</text>`);
      if (p.knee !== undefined) {
        out.push(
          `<g class="knee"><circle cx="${cx}" cy="${cy}" r="7" fill="none" stroke="${s.color}" stroke-width="2"/>` +
            `<text class="knee-label" font-size="10" font-weight="600" x="${px(Number(cx) + 9)}" y="${px(Number(cy) + 14)}">${escapeHtml(p.knee)}</text></g>`,
        );
      }
    }
    out.push('</g>');
  }
  if (all.length === 0) out.push(`<text x="${width / 2}" y="${height / 2}" text-anchor="middle" class="empty">no data yet</text>`);
  out.push(legendSvg(spec.legend, width - MARGIN.right + 10, MARGIN.top + 10));
  return frame(spec.name, width, height, spec.title, spec.description, out.join(''), spec.key);
}

export interface HeatCell {
  row: number;
  col: number;
  fill: string;
  /** dark fills get white text */
  textColor?: string;
  text?: string;
  title: string;
  /** a link (the cell's detail view) */
  href?: string;
  data?: Record<string, string>;
}

export interface HeatMapSpec {
  name: string;
  title: string;
  description: string;
  rows: string[];
  cols: string[];
  rowTitle: string;
  colTitle: string;
  cells: HeatCell[];
  legend?: LegendItem[];
  width?: number;
}

export function heatMap(spec: HeatMapSpec): string {
  const width = spec.width ?? 760;
  const left = 80;
  const top = 58;
  const cellH = 34;
  const cw = (width - left - 20) / Math.max(1, spec.cols.length);
  const height = top + spec.rows.length * cellH + 44;
  const out: string[] = ['<g class="axis">'];
  spec.rows.forEach((r, i) => out.push(`<text x="${left - 8}" y="${px(top + i * cellH + cellH * 0.62)}" text-anchor="end">${escapeHtml(r)}</text>`));
  spec.cols.forEach((c, i) => out.push(`<text x="${px(left + (i + 0.5) * cw)}" y="${top - 6}" text-anchor="middle">${escapeHtml(c)}</text>`));
  out.push(`<text x="${px(left + (width - left) / 2)}" y="${height - 10}" text-anchor="middle" class="axis-title">${escapeHtml(spec.colTitle)}</text>`);
  out.push(`<text transform="translate(16 ${px(top + (spec.rows.length * cellH) / 2)}) rotate(-90)" text-anchor="middle" class="axis-title">${escapeHtml(spec.rowTitle)}</text></g>`);
  for (const c of spec.cells) {
    const x = left + c.col * cw;
    const y = top + c.row * cellH;
    const rect = `<rect class="mark" x="${px(x + 1)}" y="${px(y + 1)}" width="${px(cw - 2)}" height="${cellH - 2}" rx="3" fill="${c.fill}"/>`;
    const text = c.text ? `<text x="${px(x + cw / 2)}" y="${px(y + cellH * 0.62)}" text-anchor="middle" fill="${c.textColor ?? '#000'}" class="heat-text">${escapeHtml(c.text)}</text>` : '';
    const inner = `<title>${escapeHtml(c.title)}</title>${rect}${text}`;
    out.push(c.href ? `<a href="${escapeHtml(c.href)}" class="heat-cell"${dataAttributes(c.data)}>${inner}</a>` : `<g class="heat-cell"${dataAttributes(c.data)}>${inner}</g>`);
  }
  if (spec.legend) {
    out.push(
      `<g class="legend">${spec.legend
        .map((item, i) => `<rect x="${left + i * 130}" y="26" width="12" height="12" fill="${item.color}" stroke="#666"/><text x="${left + 16 + i * 130}" y="36">${escapeHtml(item.name)}</text>`)
        .join('')}</g>`,
    );
  }
  return frame(spec.name, width, height, spec.title, spec.description, out.join(''));
}

export interface HistogramSpec {
  name: string;
  key?: string;
  title: string;
  description: string;
  x: Axis;
  y: Axis;
  values: readonly number[];
  bins?: number;
  color: string;
  width?: number;
  height?: number;
}

/** Equal-width bins over [min, max] of the values; one rect per non-empty bin. */
export function histogram(spec: HistogramSpec): string {
  const width = spec.width ?? 640;
  const height = spec.height ?? 300;
  const values = spec.values.filter((v) => Number.isFinite(v));
  const lo = values.length > 0 ? minOf(values) : 0;
  const hi = values.length > 0 ? maxOf(values) : 1;
  const n = Math.max(1, Math.min(spec.bins ?? 30, Math.ceil(Math.sqrt(values.length)) || 1));
  const step = (hi - lo) / n || 1;
  const counts = new Array<number>(n).fill(0);
  for (const v of values) counts[Math.min(n - 1, Math.floor((v - lo) / step))]!++;
  const xs = scale({ ...spec.x, min: lo }, [lo, lo + n * step], MARGIN.left, width - MARGIN.right);
  const ys = scale(spec.y, [0, ...counts], height - MARGIN.bottom, MARGIN.top);
  const bins = counts.map((count, i) => ({ lo: lo + i * step, hi: lo + (i + 1) * step, count }));
  return barChart(spec, width, height, xs, ys, bins, 0, '');
}

type Bin = { lo: number; hi: number; count: number };

/** The chart of both histograms: one rect per non-empty bin, from `base` up to its count, its range and count in its tooltip. */
function barChart(spec: Pick<HistogramSpec, 'name' | 'key' | 'title' | 'description' | 'x' | 'y' | 'color'>, width: number, height: number, xs: Scale, ys: Scale, bins: readonly Bin[], base: number, unit: string): string {
  const out: string[] = [axes(xs, ys, spec.x, spec.y, width, height), `<g fill="${spec.color}">`];
  for (const b of bins) {
    if (b.count === 0) continue;
    const x0 = xs.at(b.lo);
    const x1 = xs.at(b.hi);
    out.push(
      `<rect class="mark" x="${px(x0)}" y="${px(ys.at(b.count))}" width="${px(Math.max(1, x1 - x0 - 1))}" height="${px(ys.at(base) - ys.at(b.count))}">` +
        `<title>${tickText(b.lo)}–${tickText(b.hi)}${unit}: ${b.count}</title></rect>`,
    );
  }
  out.push('</g>');
  return frame(spec.name, width, height, spec.title, spec.description, out.join(''), spec.key);
}

export interface BinnedHistogramSpec extends Omit<HistogramSpec, 'values' | 'bins'> {
  /** bins counted already, ascending, each over [lo, hi) (lo > 0: both axes are log) */
  bins: readonly Bin[];
}

/**
 * Counts already binned (a cell's gaps, src/metrics/gaps.ts), drawn on log axes: gaps span 0.1 ms
 * to seconds and a single long stall beside a million short gaps must still show (a count of 1 is a
 * bar from half of 1). One rect per non-empty bin, its range and count in its tooltip.
 */
export function binnedHistogram(spec: BinnedHistogramSpec): string {
  const width = spec.width ?? 640;
  const height = spec.height ?? 300;
  const bins = spec.bins.filter((b) => b.count > 0 && b.lo > 0);
  const xs = scale({ ...spec.x, log: true }, bins.length > 0 ? [bins[0]!.lo, bins[bins.length - 1]!.hi] : [], MARGIN.left, width - MARGIN.right);
  const top = maxOf([1, ...bins.map((b) => b.count)]);
  const ticks = Array.from({ length: Math.ceil(Math.log10(top)) + 1 }, (_, i) => 10 ** i);
  const ys = scale({ ...spec.y, log: true, ticks }, [0.5, top], height - MARGIN.bottom, MARGIN.top);
  return barChart(spec, width, height, xs, ys, bins, 0.5, ' ms');
}
