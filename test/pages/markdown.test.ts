import { describe, expect, test } from 'vitest';
import { collectResult } from '../../src/results/collect.js';
import { renderMarkdown } from '../../src/pages/markdown.js';
import { renderHtml as renderHtmlPage } from '../../src/pages/html.js';
import { gridCell } from '../../src/pages/markdown-rows.js';
import { streamEndingNotes } from '../../src/pages/markdown-notes.js';
import { summaryLine } from '../../src/pages/run-items.js';
import { streamEndingsText } from '../../src/pages/view.js';
import { cellKey } from '../../src/shapes/labels.js';
import type { CellResult, SpeedMatrixMeta } from '../../src/shapes/result.js';
import { sglangCells, sglangInfo, sglangPrefill, sglangResult } from '../results/fixtures/sglang-h200.js';

const lines = (md: string) => md.split('\n');

describe('renderMarkdown on the reference SGLang page numbers', () => {
  const md = renderMarkdown(sglangResult());

  test('title and summary line', () => {
    expect(lines(md).slice(0, 5)).toEqual([
      '# Speed test matrix',
      '',
      '## Muse-Glimmer-30B on H200 NVL 141GB',
      '',
      'sglang · 0.5.6.post3.dev9265+g05c584c44 · BF16 · 5 contexts (8K–123K) × 8 concurrency levels (1–128) · prefill at 8K, 16K, 32K, 64K, 123K, 128K',
    ]);
  });

  test('sections appear in the reference order', () => {
    const headings = lines(md).filter((l) => l.startsWith('#'));
    expect(headings).toEqual([
      '# Speed test matrix',
      '## Muse-Glimmer-30B on H200 NVL 141GB',
      '### Hardware',
      '### Engine',
      '### Run',
      '### Launch command',
      '### Prefill',
      '### Sustained decode',
      '### All measurements',
    ]);
    const legend = md.indexOf('Requests queued: the server could not run all requests at once');
    const note = md.indexOf('TTFT is measured after the benchmark warms');
    expect(legend).toBeGreaterThan(md.indexOf('### Sustained decode'));
    expect(note).toBeGreaterThan(legend);
    expect(note).toBeLessThan(md.indexOf('### All measurements'));
  });

  test('bullets of Hardware, Engine and Run, absent values omitted', () => {
    expect(md).toContain('- **GPU**: H200 NVL\n- **VRAM**: 141 GB\n- **OS**: linux');
    expect(md).not.toContain('**CPU**');
    expect(md).not.toContain('**GPU count**');
    expect(md).toContain('- **Commit**: 05c584c44fb0');
    expect(md).toContain('- **Time per measurement**: 30 s');
    expect(md).toContain('- **Max output**: 4,096 tokens');
    expect(md).toContain('- **Benchmark tool**: llm-inference-bench v0.4.29');
  });

  test('launch command is redacted even when the caller forgot', () => {
    expect(md).toContain('--port 8000 --api-key <redacted>\n```');
    expect(md).not.toContain('sk-live-123');
  });

  test('prefill 8K line (10.4K) and 32K line (below 10K)', () => {
    expect(lines(md)).toContain('| 8K | 10.4K | 790 ms | 8,192 |');
    expect(lines(md)).toContain('| 32K | 9,995 | 3,218 ms | 32,164 |');
    expect(lines(md)).toContain('| Prefill | 8K | 1 | Valid | 10.4K | — | 790 ms | — | — | 1 | — | — | 0 | — |');
    expect(lines(md)).toContain('| Prefill | 32K | 1 | Valid | 9,995.0 | — | 3,218 ms | — | — | 1 | — | — | 0 | — |');
  });

  test('repeated prefill rows: median of n, counts of the repeats, their spread', () => {
    const result = sglangResult();
    const row = result.prefill[0]!;
    row.repeats = {
      count: 3,
      failed: 1,
      spread: {
        promptTokensPerSecond: { values: [10_000, 10_800], min: 10_000, max: 10_800, relativeHalfRange: 0.0385 },
        ttftMs: { values: [820, 760], min: 760, max: 820, relativeHalfRange: 0.0379 },
      },
    };
    const text = renderMarkdown(result);
    expect(text).toContain('Prompt tok/s by context length (median of 3 requests, each with a cold prompt).');
    expect(lines(text)).toContain('| Prefill | 8K | 1 | Valid | 10.4K | — | 790 ms | — | — | 2 | — | — | 1 | — | prompt tok/s ±3.9% · TTFT ±3.8% (3 runs) |');
    // a row measured once in the same page gets a dash in the spread column
    expect(lines(text)).toContain('| Prefill | 32K | 1 | Valid | 9,995.0 | — | 3,218 ms | — | — | 1 | — | — | 0 | — | — |');
    expect(text).toContain('each cell and prefill row was measured');
    // the reference layout is untouched without repeats
    expect(md).toContain('Prompt tok/s by context length (one request, cold prompt).');
    expect(md).not.toContain('Spread over repeats');
  });

  test('grid row for 8K: queued cell, bold valid cells, Over capacity', () => {
    expect(lines(md)).toContain(
      '| 8K | 59.3 · Requests queued · 122 ms TTFT | **114.2** tok/s · 186 ms TTFT | **221.9** tok/s · 200 ms TTFT | **455.3** tok/s · 294 ms TTFT | **857.3** tok/s · 422 ms TTFT | **1,583.9** tok/s · 786 ms TTFT | **2,616.6** tok/s · 1,458 ms TTFT | Over capacity |',
    );
    expect(lines(md)).toContain(
      '| 123K | **58.0** tok/s · 531 ms TTFT | **89.3** tok/s · 968 ms TTFT | **188.9** tok/s · 1,650 ms TTFT | **374.3** tok/s · 3,139 ms TTFT | Over capacity | Over capacity | Over capacity | Over capacity |',
    );
  });

  test('All measurements: the reference columns first, then the extra ones', () => {
    expect(lines(md)).toContain(
      '| Phase | Context | Requests at once | Status | Total tok/s | Per request tok/s | TTFT | Time between tokens | Average active requests | Completed requests | Output tokens | Measured for | Failed requests | Client active |',
    );
    expect(lines(md)).toContain(
      '| Sustained decode | 8K | 1 | Requests queued | 59.3 | 59.4 | 122 ms | 16.8 ms | 1.0 | 0 | 1,779 | 30.0 s | 0 | 1.0 |',
    );
    expect(lines(md)).toContain(
      '| Sustained decode | 8K | 128 | Over capacity | — | — | — | — | — | — | — | — | — | — |',
    );
  });

  test('server/client active disagreement is flagged (83.1 at 2 requests)', () => {
    expect(lines(md)).toContain(
      '| Sustained decode | 16K | 2 | Valid | 84.3 | 42.0 | 238 ms | 23.8 ms | 83.1 | 0 | 2,530 | 30.0 s | 0 | 2.0 ⚠ |',
    );
    expect(md).toContain('⚠ Client active:');
  });

  test('legend lists only statuses that appear; no legend when all valid', () => {
    expect(md).not.toContain('Warm-up timed out:');
    const allValid = sglangResult();
    allValid.cells = allValid.cells.filter((c) => c.status === 'valid');
    allValid.info.plannedCells = allValid.cells.map((c) => `${c.contextLabel}/${c.concurrency}`);
    const page = renderMarkdown(allValid);
    expect(page).not.toContain('Over capacity:');
    expect(page).toContain('TTFT is measured after the benchmark warms');
  });

  test('not simulated: no simulation sentence; not partial: no progress line', () => {
    expect(md).not.toContain('simulated');
    expect(md).not.toContain('Partial');
  });
});

describe('partial and simulated pages', () => {
  test('a partial page says how many cells finished and shows … for the rest', () => {
    const info = { ...sglangInfo(), simulated: true, simProfile: 'h200-sglang' };
    const metas: SpeedMatrixMeta[] = [
      { kind: 'run', info },
      ...sglangPrefill().slice(0, 2).map((row) => ({ kind: 'prefill' as const, row })),
      ...sglangCells().slice(0, 3).map((cell) => ({ kind: 'cell' as const, cell })),
    ];
    const md = renderMarkdown(collectResult(metas, { partial: true })!);
    const head = lines(md).slice(0, 6);
    expect(head[2]).toBe(
      'The server was the embedded simulated server (profile h200-sglang); these figures are not from real hardware.',
    );
    expect(head[4]).toMatch(/^\*\*Partial: 3 of 40 cells finished, 2 of 6 prefill rows\*\*/);
    expect(lines(md)).toContain(
      '| 8K | 59.3 · Requests queued · 122 ms TTFT | **114.2** tok/s · 186 ms TTFT | **221.9** tok/s · 200 ms TTFT | … | … | … | … | … |',
    );
    expect(lines(md)).toContain('| 32K | … | — | — |');
    expect(lines(md)).toContain('| Sustained decode | 8K | 8 | … | — | — | — | — | — | — | — | — | — | — |');
  });

  test('a final page with missing cells says Incomplete and Not run', () => {
    const metas: SpeedMatrixMeta[] = [{ kind: 'run', info: sglangInfo() }, { kind: 'cell', cell: sglangCells()[0]! }];
    const md = renderMarkdown(collectResult(metas, { partial: false })!);
    expect(md).toContain('**Incomplete: 1 of 40 cells finished, 0 of 6 prefill rows**');
    expect(md).toContain('| 8K | 59.3 · Requests queued · 122 ms TTFT | Not run |');
  });
});

test('threshold failures are listed at the end, after All measurements', () => {
  const r = sglangResult();
  r.cells[4]!.thresholdFailures = ['8K/16 ttftMs 422.0 > max 400.0 (5.5% above)'];
  r.prefill[0]!.thresholdFailures = ['prefill 8K ttftMs 790.0 > max 700.0 (12.9% above)'];
  const md = renderMarkdown(r);
  expect(md.indexOf('### Threshold failures')).toBeGreaterThan(md.indexOf('### All measurements'));
  expect(md).toContain('- prefill 8K ttftMs 790.0 > max 700.0 (12.9% above)\n- 8K/16 ttftMs 422.0 > max 400.0 (5.5% above)');
});

describe('cell texts', () => {
  const base = sglangCells()[1]!; // 8K/2 valid
  test('errors show their count next to the figures', () => {
    const cell: CellResult = {
      ...base,
      status: 'errors',
      statuses: ['errors', 'requests-queued'],
      evidence: { errors: { count: 3, byCode: { 'http-status': 3 } } },
    };
    expect(gridCell(cell)).toBe('114.2 · Errors (3), Requests queued · 186 ms TTFT');
  });
  test('absent TTFT shows a dash', () => {
    const { ttftMs: _omit, ...figures } = base.figures!;
    expect(gridCell({ ...base, figures })).toBe('**114.2** tok/s · — TTFT');
  });
  test('summary line with one context and no prefill, absent version', () => {
    const info = sglangInfo();
    info.engine = { engine: 'vllm' };
    info.run = { ...info.run, contexts: [0], concurrency: [1, 16], prefillContexts: [] };
    expect(summaryLine(info)).toBe('vllm · 1 context (0) × 2 concurrency levels (1–16)');
    // a workload run's one row is named by its workload: a file's row is context 0 only nominally
    const file = { kind: 'file' as const, text: 'file:prompts.jsonl,seed=1', file: { name: 'prompts.jsonl', sha256: 'ab', lines: 3, used: 3, skipped: 0 } };
    expect(summaryLine({ ...info, run: { ...info.run, workload: file } })).toBe('vllm · 1 workload row (prompts.jsonl) × 2 concurrency levels (1–16)');
    const shared = { ...info, run: { ...info.run, contexts: [4096], workload: { kind: 'sharedPrefix' as const, text: 'sharedPrefix:prefix=3072,suffix=1024' } } };
    expect(summaryLine(shared)).toBe('vllm · 1 workload row (sharedPrefix, 4K) × 2 concurrency levels (1–16)');
  });
});

describe('failure causes and connections under All measurements', () => {
  const cells = sglangCells();
  const errored: CellResult = {
    ...cells[1]!,
    figures: { ...cells[1]!.figures!, failedRequests: 3 },
    status: 'errors',
    statuses: ['errors'],
    evidence: {
      errors: { count: 3, byCode: { 'closed-before-response': 3 }, firstMessage: 'the server closed the connection before answering: UND_ERR_SOCKET: other side closed' },
      connectionRetries: { count: 2, firstReason: 'UND_ERR_SOCKET: other side closed' },
    },
    connections: { opened: 40, requests: 38, serverClosesAfterResponse: true },
  };
  const result = sglangResult();
  result.cells = [cells[0]!, errored, ...cells.slice(2)];
  const md = renderMarkdown(result);

  test('each Errors cell gets its failures by code and the first message', () => {
    expect(md).toContain('Failed requests, by cause:');
    expect(md).toContain('- 8K/2: 3 failed (3 closed-before-response); first: the server closed the connection before answering: UND_ERR_SOCKET: other side closed');
  });
  test('resent requests show beside the failed count and in a note; a server that closes after each stream is named', () => {
    const row = lines(md).find((l) => l.startsWith('| Sustained decode | 8K | 2 |'))!;
    expect(row).toContain('| 3 (+2 resent) |');
    expect(md).toMatch(/^Resent \(8K\/2: 2\): requests whose send on a reused keep-alive connection failed before any answer/m);
    expect(md).toContain('8K/2: 40 connections for 38 requests).');
    // next connections the window's end left unused are counted apart
    const unused = sglangResult();
    unused.cells = [cells[0]!, { ...errored, connections: { opened: 42, preparedUnused: 2, requests: 38, serverClosesAfterResponse: true } }, ...cells.slice(2)];
    expect(renderMarkdown(unused)).toContain("8K/2: 42 connections for 38 requests, 2 of them opened for a next request that the window's end left unsent).");
  });
  test('a clean page has none of these notes', () => {
    const clean = renderMarkdown(sglangResult());
    expect(clean).not.toContain('Failed requests, by cause');
    expect(clean).not.toContain('Resent (');
    expect(clean).not.toContain('Connections: the server closes');
  });
});

describe('stream endings under All measurements', () => {
  const cells = sglangCells();
  const bare: CellResult = { ...cells[1]!, evidence: { streamEndings: { done: 25, closeAfterFinish: 12, unterminatedLast: 3 } } };
  const onlyLast: CellResult = { ...cells[2]!, evidence: { streamEndings: { done: 0, closeAfterFinish: 0, unterminatedLast: 7 } } };
  const result = sglangResult();
  result.cells = [cells[0]!, bare, onlyLast, ...cells.slice(3)];
  const md = renderMarkdown(result);

  test('the line per cell: how many closed after finish_reason without [DONE], how many had an unterminated last event', () => {
    expect(streamEndingsText(bare.evidence.streamEndings!)).toBe('12 closed after finish_reason without `[DONE]`, 3 unterminated last event (of 40 completed)');
    expect(streamEndingsText(onlyLast.evidence.streamEndings!)).toBe('7 unterminated last event (of 7 completed)');
    expect(streamEndingsText({ done: 9, closeAfterFinish: 0, unterminatedLast: 0 })).toBe('');
  });
  test('the page has one note naming every such cell, and says they are completed requests', () => {
    const note = lines(md).find((l) => l.startsWith('Stream endings ('))!;
    expect(note).toContain(`${cellKey(bare.context, bare.concurrency)}: 12 closed after finish_reason without \`[DONE]\`, 3 unterminated last event (of 40 completed)`);
    expect(note).toContain(`${cellKey(onlyLast.context, onlyLast.concurrency)}: 7 unterminated last event (of 7 completed)`);
    expect(note).toContain('read as completed requests');
    expect(md.indexOf(note)).toBeGreaterThan(md.indexOf('### All measurements'));
    expect(streamEndingNotes([bare])).toHaveLength(2);
  });
  test('a clean page, or evidence with only [DONE] endings, has no such note', () => {
    expect(renderMarkdown(sglangResult())).not.toContain('Stream endings');
    expect(streamEndingNotes([{ ...bare, evidence: { streamEndings: { done: 40, closeAfterFinish: 0, unterminatedLast: 0 } } }])).toEqual([]);
  });
});

describe('prefill mode', () => {
  test('mixed: which rows warm a decode row and which are separate cold requests', () => {
    const r = sglangResult();
    r.info.run.prefillMode = 'mixed';
    expect(renderMarkdown(r)).toContain('- **Prefill mode**: Measured during decode warm-up (8K, 16K, 32K, 64K, 123K); separate cold request (128K)');
  });
  test('a run without prefill rows says so, not "Measured during decode warm-up"', () => {
    const r = sglangResult();
    r.info.run.prefillContexts = [];
    expect(renderMarkdown(r)).toContain('- **Prefill mode**: None (no prefill rows)');
  });
  test('prefillModeOf: every, none or some of the prefill contexts are decode rows', async () => {
    const { prefillModeOf } = await import('../../src/matrix/open.js');
    expect(prefillModeOf([8192, 65536], [0, 8192, 65536])).toBe('measured-during-decode-warm-up');
    expect(prefillModeOf([131072], [8192])).toBe('separate');
    expect(prefillModeOf([8192, 131072], [8192])).toBe('mixed');
    expect(prefillModeOf([], [8192])).toBe('measured-during-decode-warm-up');
  });
});

test('the tool version on the page is package.json\'s', async () => {
  const { TOOL } = await import('../../src/matrix/open.js');
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  expect(TOOL).toEqual({ name: pkg.name, version: pkg.version });
});

describe('prompt sizes', () => {
  test('exact within tolerance; a missed target is named with its count', () => {
    const r = sglangResult();
    for (const c of r.cells) c.calibration = { mode: 'exact', targetTokens: c.context, toleranceTokens: 64, withinTolerance: true };
    expect(renderMarkdown(r)).toContain("- **Prompt sizes**: exact, through the server's tokenizer, within max(64, 0.5 %) of each target");
    const miss = r.cells.find((c) => c.contextLabel === '8K')!;
    miss.calibration = { mode: 'estimated', targetTokens: 8192, toleranceTokens: 64, withinTolerance: false };
    miss.promptTokens = 8400;
    expect(renderMarkdown(r)).toContain('- **Prompt sizes**: estimated from usage.prompt_tokens (the server has no tokenize endpoint); missed the target: 8K at 8,400 for 8,192 ± 64');
  });
});

test('a Not run cell is not counted as finished: the page says the run is incomplete and why', () => {
  const r = sglangResult();
  r.cells = r.cells.map((c) =>
    c.contextLabel === '8K' && c.concurrency === 2 ? { ...c, status: 'not-run' as const, statuses: ['not-run' as const], figures: undefined, notRunReason: 'connect ECONNREFUSED' } : c,
  );
  const md = renderMarkdown(r);
  expect(md).toMatch(/\*\*Incomplete: 39 of 40 cells finished, 6 of 6 prefill rows\*\* — 1 could not start \(Not run, with the reason\)/);
  expect(md).toContain('| Not run: connect ECONNREFUSED |');
});

describe('where the counts came from', () => {
  test('the page names the output token source, the local-tokenizer prompt sizing and usage that disagrees', () => {
    const result = sglangResult();
    const cell = result.cells.find((c) => c.figures)!;
    cell.figures!.tokenSource = 'local-tokenizer';
    cell.evidence.usageDisagrees = { requests: 3, of: 4, constant: true, example: { usage: 100, counted: 57 } };
    for (const row of [...result.prefill, ...result.cells]) {
      row.calibration = { mode: 'exact', targetTokens: row.context, toleranceTokens: 64, withinTolerance: true, countedBy: 'local-tokenizer', templateTokens: 7 };
    }
    const md = renderMarkdown(result);
    expect(md).toContain('**Output tokens**: the streamed text, with the local tokenizer (LLM_BENCH_TOKENIZER)');
    expect(md).toMatch(/\*\*Prompt sizes\*\*: exact, with the local tokenizer \(LLM_BENCH_TOKENIZER; the server has no tokenize endpoint\), plus the chat template's 7 tokens/);
    expect(md).toMatch(/3 of 4 requests \(e\.g\. usage 100, streamed 57, the same usage whatever the length\)/);
    const clean = renderMarkdown(sglangResult());
    expect(clean).not.toContain('disagrees with the streamed tokens');
  });
});

describe('where running came from, and client-side Requests queued', () => {
  const cells = sglangCells();
  const clientQueued: CellResult = {
    ...cells[1]!,
    status: 'requests-queued',
    statuses: ['requests-queued'],
    figures: { ...cells[1]!.figures!, runningFrom: 'client', clientRunningRequests: 0.98, clientWaitingRequests: 1.01 },
    evidence: { queued: { concurrency: 2, source: 'client', meanRunning: 0.98, meanWaiting: 1.01, maxWaiting: 2, peakRunning: 1, heldAtPeakShare: 0.97 } },
  };
  const counters: CellResult = { ...cells[0]!, figures: { ...cells[0]!.figures!, runningFrom: 'decode-counters' } };

  test('a client-side Requests queued names its evidence in the grid and under All measurements', () => {
    expect(gridCell(clientQueued)).toBe('114.2 · Requests queued (client-side) · 186 ms TTFT');
    const result = sglangResult();
    result.cells = [counters, clientQueued, ...cells.slice(2)];
    const md = renderMarkdown(result);
    expect(md).toContain('Running requests (what Requests queued is judged on) came from:');
    expect(md).toContain("- the server's decode counters (llama.cpp `n_decode_total` × `n_busy_slots_per_decode`): 8K/1");
    expect(md).toMatch(/^- client-side timelines: the server exposes no running or waiting figure, .*: 8K\/2$/m);
    expect(md).toContain('- 8K/2: at most 1 of 2 ran at once, held there with requests waiting 97 % of the window (mean running 1.0, waiting 1.0)');
  });

  test('nothing is added when every cell used the sampled running metric (or predates the field)', () => {
    expect(renderMarkdown(sglangResult())).not.toContain('Running requests (what Requests queued is judged on)');
    const result = sglangResult();
    result.cells = result.cells.map((c) => (c.figures ? { ...c, figures: { ...c.figures, runningFrom: 'samples' } } : c));
    expect(renderMarkdown(result)).not.toContain('Running requests (what Requests queued is judged on)');
  });
});

describe('why a cell is Client-limited, on the page', () => {
  test('each Client-limited cell has its self-check figures against their bounds and the advice; none without one', () => {
    const result = sglangResult();
    const first = result.cells[0]!;
    result.cells[0] = {
      ...first,
      status: 'client-limited',
      statuses: ['client-limited', 'valid'],
      evidence: { ...first.evidence, clientLimited: { eventLoopDelayP99Ms: 4.2, arrivalLagP99Ms: 5.1, timingErrorP99Ms: Math.hypot(4.2, 5.1), boundMs: 5, cpuCores: 0.95, cpuBoundCores: 0.9, coreWaitShare: 0.02, threads: 2, thread: 2 } },
    };
    const md = renderMarkdown(result);
    const key = cellKey(first.context, first.concurrency);
    expect(md).toContain("Client-limited: the load generator could not time these cells' tokens to within its bound, so their figures may be partly the client's:");
    const note = lines(md).find((l) => l.startsWith(`- ${key}: the load generator's timing error estimate p99 was 6.6 ms`))!;
    expect(note).toContain('event-loop delay p99 4.2 ⊕ read lag p99 5.1');
    expect(note).toContain('bound 5 ms) on client thread 2 of 2 and its CPU 0.95 cores (bound 0.9)');
    expect(note).toMatch(/\. Spread the streams over more client threads \(LLM_BENCH_CLIENT_THREADS\), run fewer streams per process, or set allowClientLimited\.$/);
    expect(renderMarkdown(sglangResult())).not.toContain('Client-limited: the load generator could not time');
  });

  test('a Client-limited cell written without its self-check figures is listed too, saying they are missing', () => {
    const result = sglangResult();
    const first = result.cells[0]!;
    const { clientLimited: _dropped, ...rest } = first.evidence;
    result.cells[0] = { ...first, status: 'client-limited', statuses: ['client-limited', 'valid'], evidence: rest };
    const md = renderMarkdown(result);
    expect(md).toContain(`- ${cellKey(first.context, first.concurrency)}: marked by the load generator; its self-check's figures are not in this result.`);
  });
});

describe('the TTFT note', () => {
  test('synthetic prompts (the reference pages): the cache is warmed, so TTFT mostly excludes prefill', () => {
    expect(renderMarkdown(sglangResult())).toContain("TTFT is measured after the benchmark warms the server's prompt cache, so it mostly excludes prefill.");
  });
  test("a workload's prompts are its own: TTFT includes their prefill, less the prefix cache's hits", async () => {
    const { renderHtml } = await import('../../src/pages/html.js');
    const r = sglangResult();
    r.info.run.workload = { kind: 'file', text: 'file:sample.jsonl,seed=1' } as NonNullable<typeof r.info.run.workload>;
    const note = "Each request's prompt comes from the workload (file:sample.jsonl,seed=1), so TTFT includes its prefill, less what the server's prefix cache held (the Workload section's hit rate).";
    const md = renderMarkdown(r);
    expect(md).toContain(note);
    expect(md).not.toContain('TTFT is measured after the benchmark warms');
    expect(renderHtml(r)).toContain(note.replaceAll("'", '&#39;'));
  });
});

describe('a name of any length (issue 60: a 10 KB model name ran a heading 150,000 px wide)', () => {
  test('headings and run facts are cut with an ellipsis, the whole kept in the HTML tooltip and the JSON; every heading and cell may wrap anywhere', () => {
    const r = sglangResult();
    const name = `model-${'x'.repeat(10_000)}`;
    r.info.title = `${name} on H200`;
    r.info.run.servedModel = name;
    const md = renderMarkdown(r);
    const heading = md.split('\n').find((l) => l.startsWith('## model-'))!;
    expect(Array.from(heading.slice(3))).toHaveLength(120);
    expect(heading.endsWith('…')).toBe(true);
    const fact = md.split('\n').find((l) => l.startsWith('- **Served model**'))!;
    expect(fact.length).toBeLessThan(340);
    expect(md.length).toBeLessThan(renderMarkdown(sglangResult()).length + 2_000);
    const html = renderHtmlPage(r);
    expect(html).toContain(`<h2 title="${r.info.title}">model-`);
    expect(html).toMatch(/<dd title="model-x{10000}">model-x+…<\/dd>/);
    expect(html).toContain('h1, h2, h3, th, td { overflow-wrap: anywhere; }');
    // the JSON is the result as it is
    expect(r.info.run.servedModel).toBe(name);
  });
});
