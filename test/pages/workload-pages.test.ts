/**
 * Issue 23: the pages name the run's workload and show, per cell, what it sent and what the
 * prefix cache did (and TTFT per turn for multi-turn); a synthetic run's pages are unchanged.
 */
import { describe, expect, test } from 'vitest';
import { renderMarkdown } from '../../src/pages/markdown.js';
import { renderHtml } from '../../src/pages/html.js';
import { workloadSection } from '../../src/pages/workload-rows.js';
import { rowsAreText, workloadOverCapacityNote } from '../../src/pages/view.js';
import { cellLine } from '../../src/pages/progress-lines.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

function workloadResult() {
  const r = sglangResult();
  r.info.run.workload = { kind: 'sharedPrefix', text: 'sharedPrefix:groups=4,prefix=3072,suffix=1024,seed=1' };
  const c = r.cells.find((x) => x.figures)!;
  c.workload = {
    inputTokens: { requests: 120, mean: 4096.4, sd: 1.2, min: 4094, p50: 4096, p90: 4097, max: 4099 },
    outputTokens: { requests: 120, mean: 256, sd: 0, min: 256, p50: 256, p90: 256, max: 256 },
    prefixCache: { hitRate: 0.7481, hitTokens: 367_000, queriedTokens: 490_567, source: 'server-counters' },
    turns: [
      { turn: 1, requests: 40, ttftMs: { median: 310, p90: 350, p99: 380, samples: 40 }, promptTokensMean: 2560 },
      { turn: 2, requests: 38, ttftMs: { median: 95, p90: 120, p99: 130, samples: 38 }, promptTokensMean: 3330 },
    ],
  };
  return { r, key: `${c.contextLabel}/${c.concurrency}` };
}

describe('the Workload section', () => {
  test('Markdown: the workload in the Run section, a row per cell with lengths and the hit rate, turns, and where the rate came from', () => {
    const { r, key } = workloadResult();
    const md = renderMarkdown(r);
    expect(md).toContain('- **Workload**: sharedPrefix:groups=4,prefix=3072,suffix=1024,seed=1');
    expect(md).toContain('### Workload');
    expect(md).toContain(`| ${key} | 120 | 4,096 (4,096 / 4,097, 4,094–4,099) | 256 (256 / 256) | 74.8 % (367,000 of 490,567 tokens) |`);
    expect(md).toContain(`| ${key} | 2 | 38 | 3,330 | 95 ms | 120 ms |`);
    expect(md).toContain("from the server's hit and query counters");
  });

  test('HTML: the same section', () => {
    const { r } = workloadResult();
    const html = renderHtml(r);
    expect(html).toContain('<h2>Workload</h2>');
    expect(html).toContain('74.8 % (367,000 of 490,567 tokens)');
  });

  test("Over capacity's numbers: under the legend where a workload's request is not the row's context and the max output, and on the progress line", () => {
    const r = sglangResult();
    const over = r.cells.filter((c) => c.status === 'over-capacity');
    expect(over.length).toBeGreaterThan(1);
    // synthetic: the legend's "this many requests at this context" is the sum; nothing more on the page
    expect(workloadOverCapacityNote(r)).toBeUndefined();
    const a = over[0]!;
    const b = over[1]!;
    r.info.run.workload = { kind: 'multiTurn', text: 'multiTurn:turns=3,user=128,system=256,think=0s,seed=1' };
    a.evidence.capacity = { requiredTokens: a.concurrency * 9000, kvCapacityTokens: 1_000_000, requestTokens: 9000 };
    // a request that is the row's context and the max output needs no note
    b.evidence.capacity = { requiredTokens: b.concurrency * (b.context + 4096), kvCapacityTokens: 1_000_000, requestTokens: b.context + 4096 };
    const sum = `${a.concurrency} × 9,000 tokens a request (its prompt and max output) = ${(a.concurrency * 9000).toLocaleString('en-US')} tokens > KV capacity 1,000,000`;
    const note = `A workload row's requests are not its context: its Over capacity weighs a conversation's last turn (every reply before it at the max output; at most the max model length). ${a.contextLabel}/${a.concurrency}: ${sum}.`;
    expect(workloadOverCapacityNote(r)).toBe(note);
    expect(renderMarkdown(r)).toContain(note);
    expect(renderHtml(r)).toContain(note.replace(/'/g, '&#39;').replace('>', '&gt;'));
    r.info.run.workload = { kind: 'lengths', text: 'lengths:in=uniform(100,9000),out=4096,seed=1' };
    expect(workloadOverCapacityNote(r)).toContain("weighs the workload's largest request.");
    // the progress line: with the request from the evidence, or the row's context and the run's max output without it
    expect(cellLine(a, 3, 40, 4096)).toBe(`[speed-matrix] ${a.contextLabel}/${a.concurrency}: Over capacity · ${sum} · 3/40 done`);
    delete b.evidence.capacity!.requestTokens;
    expect(cellLine(b, 4, 40, 4096)).toContain(`: Over capacity · ${b.concurrency} × ${(b.context + 4096).toLocaleString('en-US')} tokens a request`);
    delete b.evidence.capacity;
    expect(cellLine(b, 4, 40, 4096)).toBe(`[speed-matrix] ${b.contextLabel}/${b.concurrency}: Over capacity · 4/40 done`);
  });

  test("the grid says what its row is: a workload's one row and its key, not a context length (a file's row is keyed 0)", () => {
    const r = sglangResult();
    expect(renderMarkdown(r)).toContain('Total tok/s · rows are context length, columns are simultaneous requests.');
    r.info.run.workload = { kind: 'file', text: 'file:my_prompts.jsonl,seed=1', file: { name: 'my_prompts.jsonl', sha256: 'ab'.repeat(32), lines: 3 } } as never;
    expect(rowsAreText(r)).toBe("the row is the workload's (its prompts from my_prompts.jsonl, each of its own length; keyed 0)");
    expect(renderMarkdown(r)).toContain("Total tok/s · the row is the workload's (its prompts from my_prompts.jsonl, each of its own length; keyed 0), columns are simultaneous requests.");
    // the HTML heat map too: its title, its description and its row axis
    const html = renderHtml(r);
    expect(html).toContain('<title id="chart-heatmap-t">Total tok/s by the workload&#39;s row and requests at once</title>');
    expect(html).toContain('The row is the workload&#39;s (its prompts from my_prompts.jsonl, each of its own length; keyed 0). Each cell is coloured');
    expect(html).toContain('class="axis-title">Workload</text>');
    expect(renderHtml(sglangResult())).toContain('class="axis-title">Context (tokens)</text>');
    r.info.run.workload = { kind: 'multiTurn', text: 'multiTurn:turns=2,user=64,system=0,think=0s,seed=1' };
    expect(rowsAreText(r)).toBe("the row is the workload's (keyed by its first turn, system + user)");
    r.info.run.workload = { kind: 'lengths', text: 'lengths:in=100,out=10,seed=1' };
    expect(rowsAreText(r)).toContain('mean prompt length');
  });

  test('a synthetic run has no Workload section and no Workload line', () => {
    const r = sglangResult();
    expect(workloadSection(r)).toEqual([]);
    expect(renderMarkdown(r)).not.toContain('Workload');
    r.info.run.workload = { kind: 'synthetic', text: 'synthetic' };
    expect(renderMarkdown(r)).not.toContain('Workload');
  });
});
