/**
 * One set of status words: the Markdown page and the HTML report say the same words for every
 * CellStatus (from the view model, src/pages/view.ts), each page escaping them for its format.
 */
import { describe, expect, test } from 'vitest';
import { escapeHtml, escapeText } from '../../src/text/escape.js';
import { renderHtml } from '../../src/pages/html.js';
import { renderMarkdown } from '../../src/pages/markdown.js';
import { STATUS_LABELS, statusWords } from '../../src/pages/view.js';
import { cellKey } from '../../src/shapes/labels.js';
import type { CellResult, CellStatus, SpeedMatrixResult } from '../../src/shapes/result.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

const STATUSES = Object.keys(STATUS_LABELS) as CellStatus[];

/** the reference result with its first cell given `status` (and what that status carries) */
function withStatus(status: CellStatus, change: Partial<CellResult> = {}): { result: SpeedMatrixResult; cell: CellResult } {
  const result = sglangResult();
  const first = result.cells[0]!;
  const cell: CellResult = {
    ...first,
    status,
    statuses: [status],
    ...(status === 'not-run' || status === 'over-capacity' ? { figures: undefined } : {}),
    ...(status === 'errors' ? { evidence: { ...first.evidence, errors: { count: 3, byCode: { 'http-500': 3 } } } } : {}),
    ...(status === 'not-run' ? { notRunReason: 'the server refused connections (ECONNREFUSED) <for 15 s>' } : {}),
    ...change,
  };
  result.cells[0] = cell;
  return { result, cell };
}

/** the Status column of the cell's All measurements row on the Markdown page */
function markdownStatus(md: string, cell: CellResult): string {
  const label = cellKey(cell.context, cell.concurrency).split('/')[0];
  const row = md.split('\n').find((l) => l.startsWith(`| Sustained decode | ${label} | ${cell.concurrency} |`));
  return row!.split(' | ')[3]!;
}

/** the status badge of the cell's detail view in the HTML */
function htmlStatus(html: string, cell: CellResult): string {
  const key = cellKey(cell.context, cell.concurrency);
  const match = new RegExp(`<h3>${key}[^<]*<span class="status"[^>]*>([^<]*)</span>`).exec(html);
  return match![1]!;
}

describe('status words are the same on the Markdown page and in the HTML', () => {
  for (const status of STATUSES) {
    test(status, () => {
      const { result, cell } = withStatus(status);
      const words = statusWords(cell);
      expect(words.startsWith(STATUS_LABELS[status])).toBe(true);
      expect(markdownStatus(renderMarkdown(result), cell)).toBe(escapeText(words));
      expect(htmlStatus(renderHtml(result), cell)).toBe(escapeHtml(words));
    });
  }

  test('errors with their count, Not run with its reason, client-side queueing said so, several statuses main first', () => {
    expect(statusWords(withStatus('errors').cell)).toBe('Errors (3)');
    expect(statusWords(withStatus('not-run').cell)).toBe('Not run: the server refused connections (ECONNREFUSED) <for 15 s>');
    const queued = withStatus('requests-queued', { evidence: { queued: { source: 'client', peakRunning: 2, concurrency: 4, heldAtPeakShare: 0.5, meanRunning: 2, meanWaiting: 2 } } as CellResult['evidence'] });
    expect(statusWords(queued.cell)).toBe('Requests queued (client-side)');
    expect(htmlStatus(renderHtml(queued.result), queued.cell)).toBe('Requests queued (client-side)');
    const several = withStatus('errors', { statuses: ['errors', 'valid', 'client-limited'] });
    expect(statusWords(several.cell)).toBe('Errors (3), Client-limited');
    expect(markdownStatus(renderMarkdown(several.result), several.cell)).toBe('Errors (3), Client-limited');
    expect(htmlStatus(renderHtml(several.result), several.cell)).toBe('Errors (3), Client-limited');
  });
});
