/**
 * What the HTML pages share: the page frame (a Content-Security-Policy that allows no script and no
 * request, so the file opens anywhere and nothing in it can run), the stylesheet, the status
 * colours (the words are the view model's, src/pages/view.ts STATUS_LABELS), and the
 * run's Hardware / Engine / Run sections.
 */
import type { CellStatus } from '../shapes/result.js';
import { redactSecrets } from '../redact.js';
import { engineItems, hardwareItems, runItems, summaryLine } from './run-items.js';
import type { SpeedMatrixResult } from '../shapes/result.js';
import { escapeHtml } from '../text/escape.js';
import { cutText, ITEM_MAX_CHARS } from '../text/format.js';

/** Status fills: Okabe–Ito hues, one per status, with the text colour that reads on each. */
export const STATUS_COLORS: Record<CellStatus, { fill: string; text: string }> = {
  valid: { fill: '#009E73', text: '#fff' },
  'requests-queued': { fill: '#E69F00', text: '#000' },
  'over-capacity': { fill: '#BBBBBB', text: '#000' },
  'warmup-timed-out': { fill: '#CC79A7', text: '#000' },
  errors: { fill: '#D55E00', text: '#fff' },
  'client-limited': { fill: '#56B4E9', text: '#000' },
  'stream-buffered': { fill: '#0072B2', text: '#fff' },
  'not-run': { fill: '#FFFFFF', text: '#000' },
};

/** a planned cell with no result yet (partial page) or never run */
export const MISSING_COLOR = { fill: '#F2F2F2', text: '#555' };

export const STATUS_ORDER: readonly CellStatus[] = ['valid', 'requests-queued', 'over-capacity', 'warmup-timed-out', 'errors', 'client-limited', 'stream-buffered', 'not-run'];

const CSS = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1100px; padding: 16px 24px 64px; color: #1a1a1a; }
h1, h2, h3, th, td { overflow-wrap: anywhere; }
h1 { font-size: 24px; margin: 8px 0; } h2 { font-size: 19px; margin-top: 28px; border-bottom: 1px solid #ddd; padding-bottom: 4px; } h3 { font-size: 16px; }
.note { background: #fff8e1; border-left: 4px solid #E69F00; padding: 6px 10px; }
.info { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 0 24px; }
.info dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
.info dt { font-weight: 600; } .info dd { margin: 0; overflow-wrap: anywhere; }
pre { background: #f6f6f6; padding: 8px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
figure.chart { margin: 16px 0; } figure.chart figcaption { color: #555; font-size: 12px; }
figure.chart svg { max-width: 100%; height: auto; font: 11px system-ui, sans-serif; }
.chart-title { font-size: 14px; font-weight: 600; }
.axis text { fill: #333; } .axis path { stroke: #333; } .axis-title { font-weight: 600; }
.grid line { stroke: #e3e3e3; }
.point-label { font-size: 10px; fill: #333; }
.heat-text { font-size: 11px; pointer-events: none; }
a.heat-cell:focus rect, a.heat-cell:hover rect { stroke: #000; stroke-width: 2; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; } th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
td.text { text-align: left; }
.ratio.worse { color: #B03A00; font-weight: 600; } .ratio.better { color: #00664a; }
.cell-detail { display: none; border: 2px solid #0072B2; border-radius: 6px; padding: 4px 16px 16px; margin: 16px 0; }
.cell-detail:target { display: block; }
.status { display: inline-block; padding: 0 6px; border-radius: 3px; border: 1px solid #999; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 0 16px; }
`;

/** The whole page: no script, no request (the policy forbids both), styles inline. */
export function htmlPage(title: string, body: string): string {
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${CSS}</style></head>\n` +
    `<body>\n${body}\n</body></html>\n`
  );
}

function definitionList(items: Array<[string, string | undefined]>): string {
  const rows = items.filter((i): i is [string, string] => typeof i[1] === 'string' && i[1].trim() !== '');
  // a value of any length (a 10 KB model name): cut with an ellipsis, the whole in the tooltip
  const dd = (v: string) => (v.length > ITEM_MAX_CHARS ? `<dd title="${escapeHtml(v)}">${escapeHtml(cutText(v, ITEM_MAX_CHARS))}</dd>` : `<dd>${escapeHtml(v)}</dd>`);
  return `<dl>${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt>${dd(v)}`).join('')}</dl>`;
}

/** Hardware, Engine and Run, as on the Markdown page, and the launch command (secrets redacted). */
export function infoSections(result: SpeedMatrixResult): string {
  const { info } = result;
  const out = [
    `<p>${escapeHtml(summaryLine(info))}</p>`,
    '<div class="info">',
    `<section><h3>Hardware</h3>${definitionList(hardwareItems(info))}</section>`,
    `<section><h3>Engine</h3>${definitionList(engineItems(info))}</section>`,
    `<section><h3>Run</h3>${definitionList(runItems(result))}</section>`,
    '</div>',
  ];
  if (info.launchCommand) out.push(`<h3>Launch command</h3><pre>${escapeHtml(redactSecrets(info.launchCommand))}</pre>`);
  return out.join('\n');
}

export function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>, textColumns: readonly number[] = []): string {
  const cls = (i: number) => (textColumns.includes(i) ? ' class="text"' : '');
  return (
    `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>` +
    rows.map((r) => `<tr>${r.map((c, i) => `<td${cls(i)}>${c}</td>`).join('')}</tr>`).join('') +
    '</tbody></table>'
  );
}
