/**
 * Text from outside (a served model id, an engine version, launch arguments, a server's error text,
 * a file path) reaches the pages escaped: it can neither inject HTML nor format Markdown, and a line
 * break never splits a heading, a list item or a table row (issue 14, point 4).
 */
import { describe, expect, test } from 'vitest';
import { compareResults } from '../../src/judge/compare.js';
import { renderDiffMarkdown } from '../../src/pages/diff-markdown.js';
import { resolveTolerances } from '../../src/thresholds/tolerances.js';
import { codeBlock, codeSpan, escapeLine, escapeText } from '../../src/text/escape.js';
import { renderMarkdown } from '../../src/pages/markdown.js';
import { renderHtml } from '../../src/pages/html.js';
import { judgeCell } from '../../src/judge/index.js';
import { renderStepSummary } from '../../src/pages/step-summary.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

const EVIL = 'x</td><script>alert(1)</script>|**b**\n<img src=x onerror=alert(3)>';

function evilResult(): SpeedMatrixResult {
  const r = sglangResult();
  r.info.title = `${EVIL} on H200`;
  r.info.run.servedModel = EVIL;
  r.info.engine.version = `0.5\r\n# ${EVIL}`;
  r.info.launchCommand = 'serve --model x\n```\n<script>alert(2)</script>\n```';
  r.info.simOverrides = { note: EVIL };
  r.info.baselinePath = 'base`s/speed\nmatrix.json';
  const cell = r.cells[1]!;
  cell.status = 'errors';
  cell.statuses = ['errors'];
  cell.figures = { ...cell.figures!, failedRequests: 2 };
  cell.evidence = { errors: { count: 2, byCode: { 'http-status': 2 }, firstMessage: `HTTP 500: ${EVIL}` } };
  return r;
}

/** no HTML element from the text survives outside fenced code (where it is shown as text), and no line starts with one */
function expectNoInjection(page: string): void {
  const outsideCode = page.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '');
  expect(outsideCode).not.toMatch(/<script|<img|<\/td>/i);
  expect(page.split('\n').some((l) => l.startsWith('<img'))).toBe(false);
}

describe('server-supplied text on the pages', () => {
  const result = evilResult();

  test('speed-matrix.md: heading, bullets, error notes escaped; the launch command stays inside its fence', () => {
    const md = renderMarkdown(result);
    expectNoInjection(md);
    const heading = md.split('\n').find((l) => l.startsWith('## '))!;
    expect(heading).toBe(`## x&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\|\\*\\*b\\*\\* &lt;img src=x onerror=alert(3)&gt; on H200`);
    const served = md.split('\n').filter((l) => l.startsWith('- **Served model**'));
    expect(served).toHaveLength(1);
    expect(served[0]).toContain('\\*\\*b\\*\\*');
    expect(md).toMatch(/^- \*\*Version\*\*: 0\.5 # x&lt;/m);
    expect(md).toMatch(/^- \*\*Simulator overrides\*\*: \{"note":"x&lt;/m);
    expect(md).toMatch(/^- 8K\/2: 2 failed \(2 http-status\); first: HTTP 500: x&lt;\/td&gt;/m);
    // the command's own ``` cannot close the block: the fence is longer
    const at = md.indexOf('### Launch command');
    const block = md.slice(at).split('\n').slice(2, 8);
    expect(block[0]).toBe('````sh');
    expect(block[5]).toBe('````');
  });

  test('the job summary and the diff page escape the title, the labels and the baseline path', () => {
    const summary = renderStepSummary(result);
    expectNoInjection(summary);
    expect(summary.split('\n')[0]).toContain('&lt;script&gt;');
    expect(summary).toContain('### Regressions against the baseline ``base`s/speed matrix.json``');
    const base = sglangResult();
    const diff = renderDiffMarkdown({
      base: base.info,
      next: result.info,
      comparison: compareResults(base, result, resolveTolerances()),
      baseLabel: `main\n- injected item <b>x</b>`,
      nextLabel: 'new',
    });
    expectNoInjection(diff);
    // the label is a code span on one line: shown as text, HTML included
    expect(diff).toContain('- **Baseline**: `main - injected item <b>x</b>` · ');
    // the label's line break did not start a new list item
    expect(diff.split('\n').filter((l) => l.startsWith('- '))).not.toContainEqual(expect.stringMatching(/^- injected/));
  });
});

describe("a failure line that carries a server's text", () => {
  // judged as a cell is: the server's text as sent (on one line) in the line the JSON and the console get
  const result = evilResult();
  const cell = result.cells[1]!;
  const [line] = judgeCell('8K/2', cell, { allowClientLimited: false, allowErrors: false, maxOutputTokens: 4096 }).thresholdFailures!;
  cell.thresholdFailures = [line!];

  test('is stored as sent, on one line: no Markdown escape in the JSON or the console', () => {
    expect(line).toContain('first: HTTP 500: x</td><script>alert(1)</script>|**b** <img src=x onerror=alert(3)>.');
    expect(line).not.toContain('\\');
  });

  test('is escaped where it is Markdown (the page, the job summary) and where it is HTML (the HTML page), shown as written', () => {
    for (const page of [renderMarkdown(result), renderStepSummary(result)]) {
      expectNoInjection(page);
      expect(page).toContain('- 8K/2 had 2 failed requests (2 http-status); first: HTTP 500: x&lt;/td>&lt;script>alert(1)&lt;/script>\\|\\*\\*b\\*\\* &lt;img src=x onerror=alert(3)>.');
    }
    const html = renderHtml(result);
    expect(html).not.toMatch(/<script>alert|<img src=x/);
    // HTML-escaped once, with no Markdown backslash in it
    expect(html).toContain('first: HTTP 500: x&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;|**b** &lt;img src=x onerror=alert(3)&gt;.');
  });
});

describe('escapers', () => {
  test('escapeLine: one line, Markdown escaped; <, > and & left where they cannot start markup', () => {
    expect(escapeLine('8K/16 ttftMs 422.0 > max 400.0; a < b & c')).toBe('8K/16 ttftMs 422.0 > max 400.0; a < b & c');
    expect(escapeLine('<b>x</b> <!-- c --> <?php <http://e> &amp; &#60;')).toBe('&lt;b>x&lt;/b> &lt;!-- c --> &lt;?php &lt;http://e> &amp;amp; &amp;#60;');
    expect(escapeLine('a\r\nb *_`[]|~\\ owned_by _b_')).toBe('a b \\*\\_\\`\\[\\]\\|\\~\\\\ owned_by \\_b\\_');
  });

  test('escapeText: one line, HTML and Markdown characters escaped', () => {
    expect(escapeText('a\r\nb\nc\u2028d')).toBe('a b c d');
    expect(escapeText('<a href="x">&</a>')).toBe('&lt;a href="x"&gt;&amp;&lt;/a&gt;');
    expect(escapeText('*_`[]|~#\\')).toBe('\\*\\_\\`\\[\\]\\|\\~#\\\\');
    // an underscore inside a word cannot format: left as it is; at a word's edge it is escaped
    expect(escapeText('owned_by _b_ x_')).toBe('owned_by \\_b\\_ x\\_');
    expect(escapeText('plain text 1.5 (ok)')).toBe('plain text 1.5 (ok)');
  });
  test('codeSpan and codeBlock fence longer than any backtick run inside', () => {
    expect(codeSpan('a/b.json')).toBe('`a/b.json`');
    expect(codeSpan('a`b')).toBe('``a`b``');
    expect(codeSpan('`x')).toBe('`` `x ``');
    expect(codeBlock('x\n```\ny', 'sh')).toEqual(['````sh', 'x\n```\ny', '````']);
    expect(codeBlock('plain')).toEqual(['```', 'plain', '```']);
  });
});
