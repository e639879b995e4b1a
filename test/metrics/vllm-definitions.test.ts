/**
 * TTFT, TPOT, ITL, end-to-end latency and request throughput as vLLM's `benchmark_serving` defines
 * them, computed both ways from one set of event times (issue 59): vLLM's chat request loop and
 * metric step restated here (a start time; each data chunk's arrival; the first chunk with
 * `choices` sets TTFT, every later one appends its gap since the previous data chunk to ITL;
 * output tokens from usage; latency is the last data chunk less the start; TPOT is (latency −
 * TTFT) / (output tokens − 1); request throughput is completed requests over the duration),
 * against this tool's figures of a cell holding the same requests, with a window around all of
 * them and TTFT started at the send (vLLM's start; the matrix starts at the request's headers
 * written, docs/method.md). Where the two differ by construction (a role chunk or a usage chunk
 * of its own), the last tests pin the difference.
 */
import { describe, expect, test } from 'vitest';
import { computeCellFigures } from '../../src/metrics/figures.js';
import { quantile } from '../../src/metrics/stats.js';
import { requestRecord } from '../../src/metrics/request-records.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';

/** one SSE data chunk: arrival time (ms), tokens of text it carries, whether it has `choices` (a role chunk has, a usage-only one not), usage's completion_tokens if given */
interface Chunk {
  atMs: number;
  tokens: number;
  choices: boolean;
  usage?: number;
}

interface Request {
  startMs: number;
  chunks: Chunk[];
}

/** vLLM's per-request loop, restated: ttft, itl, latency and output tokens of one request */
function vllmRequest(r: Request): { ttft: number; itl: number[]; latency: number; outputTokens: number } {
  let ttft = 0;
  let recent = r.startMs;
  const itl: number[] = [];
  let outputTokens = 0;
  for (const c of r.chunks) {
    if (c.choices) {
      if (ttft === 0) ttft = c.atMs - r.startMs;
      else itl.push(c.atMs - recent);
    }
    if (c.usage !== undefined) outputTokens = c.usage;
    recent = c.atMs;
  }
  return { ttft, itl, latency: recent - r.startMs, outputTokens };
}

/** numpy's default percentile (linear between closest ranks) */
const percentile = (xs: number[], p: number) => quantile([...xs].sort((a, b) => a - b), p / 100)!;

/** the same request as this tool's client records it */
function timelineOf(r: Request, id: string): RequestTimeline {
  const text = r.chunks.filter((c) => c.tokens > 0);
  const last = r.chunks[r.chunks.length - 1]!.atMs;
  return {
    id,
    sendMs: r.startMs,
    firstTokenMs: text[0]!.atMs,
    chunkMs: text.map((c) => c.atMs),
    chunkTokens: text.map((c) => c.tokens),
    tokenSource: 'usage',
    end: { kind: 'done', atMs: last + 0.05 },
  } as RequestTimeline;
}

/** a request with continuous usage (vLLM's continuous_usage_stats): usage rides on every text chunk, the role on the first */
function streamed(startMs: number, ttftMs: number, gaps: number[], tokensPerChunk = 1): Request {
  const chunks: Chunk[] = [];
  let at = startMs + ttftMs;
  let total = 0;
  for (let i = 0; i <= gaps.length; i++) {
    total += tokensPerChunk;
    chunks.push({ atMs: at, tokens: tokensPerChunk, choices: true, usage: total });
    at += gaps[i] ?? 0;
  }
  return { startMs, chunks };
}

describe("vLLM's definitions and this tool's figures on the same event times", () => {
  // 12 requests, each its own TTFT and gaps, one with a 900 ms stall, one with 3-token chunks
  let seed = 3;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const requests: Request[] = Array.from({ length: 12 }, (_, i) => {
    const gaps = Array.from({ length: 20 + i * 3 }, () => 8 + rnd() * 6);
    if (i === 5) gaps[7] = 900;
    return streamed(1000 + i * 137, 40 + rnd() * 200, gaps, i === 9 ? 3 : 1);
  });
  const v = requests.map(vllmRequest);
  const windowStartMs = 0;
  const windowEndMs = 20_000;
  const f = computeCellFigures({ timelines: requests.map((r, i) => timelineOf(r, `r${i}`)), windowStartMs, windowEndMs, metricsSamples: [], ttftFrom: 'send', stallLimit: undefined });

  test('ITL: every gap of every request, median / p90 / p95 / p99 / max', () => {
    const itls = v.flatMap((x) => x.itl);
    expect(f.interTokenLatencyMs!.gaps).toBe(itls.length);
    // the tool sorts its gaps as 4-byte floats: equal to 6 significant digits
    for (const [k, p] of [['median', 50], ['p90', 90], ['p95', 95], ['p99', 99]] as const) expect(f.interTokenLatencyMs![k]).toBeCloseTo(percentile(itls, p), 3);
    expect(f.interTokenLatencyMs!.max).toBe(Math.max(...itls));
  });

  test('TPOT: (latency − TTFT) / (output tokens − 1), median / p90 / p99 over the requests', () => {
    const tpots = v.map((x) => (x.latency - x.ttft) / (x.outputTokens - 1));
    expect(f.tpotMs!.samples).toBe(12);
    expect(f.tpotMs!.median).toBeCloseTo(percentile(tpots, 50), 9);
    expect(f.tpotMs!.p90).toBeCloseTo(percentile(tpots, 90), 9);
    expect(f.tpotMs!.p99).toBeCloseTo(percentile(tpots, 99), 9);
  });

  test('end-to-end latency and TTFT: median / p90 / p99 over the requests', () => {
    const e2e = v.map((x) => x.latency);
    const ttft = v.map((x) => x.ttft);
    for (const [k, p] of [['median', 50], ['p90', 90], ['p99', 99]] as const) {
      expect(f.e2eLatencyMs![k]).toBeCloseTo(percentile(e2e, p), 9);
      expect(f.ttftMs![k]).toBeCloseTo(percentile(ttft, p), 9);
    }
  });

  test('LLM_BENCH_PERCENTILES: TTFT, TPOT, ITL and E2E at the chosen percentiles are numpy\'s on the same values', () => {
    const chosen = [50, 95, 99.9];
    const g = computeCellFigures({ timelines: requests.map((r, i) => timelineOf(r, `r${i}`)), windowStartMs, windowEndMs, metricsSamples: [], ttftFrom: 'send', stallLimit: undefined, percentiles: chosen });
    const tpots = v.map((x) => (x.latency - x.ttft) / (x.outputTokens - 1));
    const itls = v.flatMap((x) => x.itl);
    for (const p of chosen) {
      expect(g.ttftMs!.percentiles![`p${p}`]).toBeCloseTo(percentile(v.map((x) => x.ttft), p), 9);
      expect(g.tpotMs!.percentiles![`p${p}`]).toBeCloseTo(percentile(tpots, p), 9);
      expect(g.e2eLatencyMs!.percentiles![`p${p}`]).toBeCloseTo(percentile(v.map((x) => x.latency), p), 9);
      expect(g.interTokenLatencyMs!.percentiles![`p${p}`]).toBeCloseTo(percentile(itls, p), 3);
    }
    // the fixed quantiles are unchanged beside them, and without the setting there are none
    expect(g.ttftMs!.median).toBe(f.ttftMs!.median);
    expect(g.ttftMs!.percentiles!.p50).toBe(g.ttftMs!.median);
    expect(f.ttftMs!.percentiles).toBeUndefined();
    expect(f.interTokenLatencyMs!.percentiles).toBeUndefined();
  });

  test('the per-request file (LLM_BENCH_REQUESTS_FILE): each line\'s TTFT, latency, TPOT, tokens and gaps are vLLM\'s for that request', () => {
    requests.forEach((r, i) => {
      const line = requestRecord({ run: 'x', kind: 'decode', cell: '0/12', context: 0, concurrency: 12, repeat: 1 }, timelineOf(r, `r${i}`), { windowStartMs, windowEndMs }, (t) => t);
      const x = v[i]!;
      expect(line.ttftMs).toBeCloseTo(x.ttft, 3);
      expect(line.e2eMs).toBeCloseTo(x.latency, 3);
      expect(line.tpotMs).toBeCloseTo((x.latency - x.ttft) / (x.outputTokens - 1), 3);
      expect(line.outputTokens).toBe(x.outputTokens);
      expect(line.itl!.gaps).toBe(x.itl.length);
      expect(line.itl!.medianMs).toBeCloseTo(percentile(x.itl, 50), 3);
      expect(line.itl!.p99Ms).toBeCloseTo(percentile(x.itl, 99), 3);
      expect(line.itl!.maxMs).toBeCloseTo(percentile(x.itl, 100), 3);
      expect(line.itl!.meanMs).toBeCloseTo(x.itl.reduce((a, b) => a + b, 0) / x.itl.length, 3);
      expect(line).toMatchObject({ end: 'done', completedInWindow: true, windowTokens: x.outputTokens });
    });
  });

  test('request throughput: completed requests over the duration', () => {
    expect(f.completedRequests).toBe(12);
    expect(f.requestsPerSecond).toBeCloseTo(12 / ((windowEndMs - windowStartMs) / 1000), 12);
  });

  test('a usage-only chunk after the last text chunk: vLLM ends the latency at it, the tool at the last token (the departure, to the chunk)', () => {
    const r = streamed(0, 50, [10, 10, 10]);
    const last = r.chunks[r.chunks.length - 1]!;
    r.chunks.push({ atMs: last.atMs + 0.4, tokens: 0, choices: false, usage: 4 });
    const x = vllmRequest(r);
    const g = computeCellFigures({ timelines: [timelineOf(r, 'u')], windowStartMs: -1, windowEndMs: 1000, metricsSamples: [], ttftFrom: 'send', stallLimit: undefined });
    expect(x.latency - g.e2eLatencyMs!.median).toBeCloseTo(0.4, 9);
    expect(g.tpotMs!.median).toBeCloseTo(10, 9);
  });

  test('a role chunk of its own before the first text: vLLM starts TTFT at it and counts the gap to the text as ITL; the tool (METHOD: the first chunk with text) does not', () => {
    const r = streamed(0, 50, [10, 10, 10]);
    r.chunks.unshift({ atMs: 49.7, tokens: 0, choices: true });
    const x = vllmRequest(r);
    const g = computeCellFigures({ timelines: [timelineOf(r, 'role')], windowStartMs: -1, windowEndMs: 1000, metricsSamples: [], ttftFrom: 'send', stallLimit: undefined });
    expect(g.ttftMs!.median - x.ttft).toBeCloseTo(0.3, 9);
    expect(x.itl.length - g.interTokenLatencyMs!.gaps).toBe(1);
  });
});
