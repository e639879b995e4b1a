import { describe, expect, test } from 'vitest';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { streamBunching } from '../../src/metrics/bunching.js';
import { isBuffered } from '../../src/judge/buffered.js';

function timeline(chunks: Array<[number, number]>): RequestTimeline {
  return { id: 'r', sendMs: 0, chunkMs: chunks.map((c) => c[0]), chunkTokens: chunks.map((c) => c[1]), tokenSource: 'chunks', reasoningTokens: 0 };
}

/** a request streaming `tokens` chunks every `gapMs`, from `startMs`, k tokens each */
const steady = (startMs: number, tokens: number, gapMs: number, k = 1): RequestTimeline =>
  timeline(Array.from({ length: tokens }, (_, i) => [startMs + i * gapMs, k] as [number, number]));

/** chunks released in bursts of `size` at once every `everyMs` (a buffering proxy) */
const bunched = (startMs: number, bursts: number, size: number, everyMs: number): RequestTimeline =>
  timeline(Array.from({ length: bursts * size }, (_, i) => [startMs + Math.floor(i / size) * everyMs, 1] as [number, number]));

describe('streams bunched on the way', () => {
  test('an engine stream (one chunk per step, several tokens per chunk too) is not buffered', () => {
    for (const t of [[steady(10, 200, 10)], [steady(10, 200, 3, 4)], [steady(5, 50, 16.8), steady(7, 50, 16.8)]]) {
      const b = streamBunching(t, 0, 5_000)!;
      expect(isBuffered(b)).toBe(false);
      expect(b.zeroGapShare).toBe(0);
    }
  });

  test('a buffering proxy (bursts of 40 chunks every 400 ms) is buffered, with the burst sizes', () => {
    const b = streamBunching([bunched(100, 10, 40, 400), bunched(120, 10, 40, 400)], 0, 5_000)!;
    expect(isBuffered(b)).toBe(true);
    expect(b.zeroGapShare).toBeGreaterThan(0.9);
    expect(b.burstTokens.median).toBe(40);
    expect(b.burstTokens.max).toBe(40);
    expect(b.requests).toBe(2);
  });

  test('a proxy that releases its bursts paced (20 tokens 1 ms apart every 400 ms) is buffered: 1 ms is far below the stream\'s own rhythm (issue 60; a fixed 0.5 ms missed it)', () => {
    const paced = (startMs: number): RequestTimeline =>
      timeline(Array.from({ length: 200 }, (_, i) => [startMs + Math.floor(i / 20) * 400 + (i % 20) * 1, 1] as [number, number]));
    const b = streamBunching([paced(100), paced(130)], 0, 5_000)!;
    expect(b.zeroGapShare).toBeGreaterThan(0.9);
    expect(b.burstTokens.median).toBe(20);
    expect(isBuffered(b)).toBe(true);
    // an engine's own jitter around its step (5 to 15 ms gaps about a 10 ms rhythm), and multi-token chunks at a 40 ms step, are not
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let at = 0;
    const jittery = timeline(Array.from({ length: 300 }, () => [(at += 5 + rnd() * 10), 1] as [number, number]));
    // nor a stream that stalls once (a 3 s pause among 31 gaps of 10 ms: the pause is no rhythm)
    const stalled = timeline(Array.from({ length: 32 }, (_, i) => [i * 10 + (i >= 15 ? 3000 : 0), 1] as [number, number]));
    // nor one with several stalls (40 gaps of 20 ms and three of 2 s: preemptions), nor prefill steps of 160 ms between decode steps of 20 ms
    let t3 = 0;
    const stalls = timeline(Array.from({ length: 44 }, (_, i) => [(t3 += i > 0 && i % 11 === 0 ? 2000 : 20), 1] as [number, number]));
    let t4 = 0;
    const prefillSteps = timeline(Array.from({ length: 60 }, (_, i) => [(t4 += i % 2 === 0 ? 20 : 160), 1] as [number, number]));
    for (const t of [[jittery], [steady(10, 100, 40, 4)], [stalled, stalled], [stalls, stalls], [prefillSteps, prefillSteps]]) {
      const clean = streamBunching(t, 0, 5_000)!;
      expect(clean.zeroGapShare).toBe(0);
      expect(isBuffered(clean)).toBe(false);
    }
  });

  test('a request delivered whole (one read, no gap at all) is buffered through its burst size', () => {
    const whole = timeline([[900, 60]]);
    const b = streamBunching([whole, timeline([[950, 60]])], 0, 5_000)!;
    expect(b.gaps).toBe(0);
    expect(b.oneBurstRequests).toBe(2);
    expect(isBuffered(b)).toBe(true);
  });

  test('a few coalesced reads (a client hiccup) do not make a stream buffered; only the window counts', () => {
    const chunks: Array<[number, number]> = Array.from({ length: 100 }, (_, i) => [i * 10, 1]);
    chunks[50] = [chunks[49]![0], 1];
    expect(isBuffered(streamBunching([timeline(chunks)], 0, 5_000)!)).toBe(false);
    expect(streamBunching([bunched(10_000, 5, 40, 400)], 0, 5_000)).toBeUndefined();
  });
});

describe('the status and the reasons on the cell', () => {
  const figures = { failedRequests: 0, clientActiveRequests: 2, activeRequestsDisagree: false } as const;
  test('bunched timelines make the cell Stream buffered, with the evidence; clean ones do not', async () => {
    const { cellStatuses } = await import('../../src/judge/status.js');
    const bunchedCell = cellStatuses({
      concurrency: 2,
      figures,
      timelines: [bunched(100, 10, 40, 400), bunched(120, 10, 40, 400)],
      windowStartMs: 0,
      windowEndMs: 5_000,
      loopDelayBoundMs: 50,
    });
    expect(bunchedCell.statuses).toContain('stream-buffered');
    expect(bunchedCell.evidence.streamBuffered?.burstTokens.median).toBe(40);
    expect(bunchedCell.evidence.streamBuffered).not.toHaveProperty('buffered');
    const clean = cellStatuses({ concurrency: 2, figures, timelines: [steady(10, 200, 10), steady(15, 200, 10)], windowStartMs: 0, windowEndMs: 5_000, loopDelayBoundMs: 50 });
    expect(clean.statuses).not.toContain('stream-buffered');
  });

  test('a figure that cannot be computed says why', async () => {
    const { whyNotComputed } = await import('../../src/metrics/figures.js');
    expect(whyNotComputed([timeline([[900, 60]])], 0, 5_000, true, false)?.timeBetweenTokensMs).toMatch(/arrived at one instant/);
    expect(whyNotComputed([timeline([[9_000, 1]])], 0, 5_000, true, true)).toEqual({ timeBetweenTokensMs: 'no token arrived inside the window', ttftMs: "no request's first token arrived by the window's end" });
    expect(whyNotComputed([steady(10, 5, 10)], 0, 5_000, false, false)).toBeUndefined();
  });
});

describe('through a real socket (issue 60)', () => {
  test('a fake server releasing 20-token bursts 1 ms apart every 200 ms: the client stamps them, the cell reads Stream buffered; the same server streaming a token every 10 ms does not', { timeout: 20_000 }, async () => {
    const { createServer } = await import('node:http');
    const { Client } = await import('undici');
    const { streamRequest } = await import('../../src/client/stream.js');
    const { getAdapter } = await import('../../src/engines/detect.js');
    const openai = getAdapter('openai');
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const event = (i: number) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: `t${i} ` }, finish_reason: null }] })}\n\n`;
    const server = createServer(async (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 200; i++) {
        res.write(event(i));
        await sleep(req.url === '/paced' ? (i % 20 === 19 ? 200 : 1) : 10);
      }
      res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const client = new Client(origin);
    try {
      const read = (path: string) =>
        streamRequest({ id: path, dispatcher: client, origin, path, body: '{}', decode: (p) => openai.decodeChunk(p), endsWithDone: openai.endsWithDone, timeouts: { headersMs: 5000, stallMs: 5000 } });
      const paced = await read('/paced');
      const steadyStream = await read('/steady');
      const b = streamBunching([paced], 0, Number.MAX_SAFE_INTEGER)!;
      expect(b.zeroGapShare, JSON.stringify(b)).toBeGreaterThan(0.8);
      expect(isBuffered(b)).toBe(true);
      expect(isBuffered(streamBunching([steadyStream], 0, Number.MAX_SAFE_INTEGER)!)).toBe(false);
    } finally {
      await client.close();
      await new Promise((r) => server.close(r));
    }
  });
});
