/**
 * A metric sample is evidence only when it could be taken (issue 60, metrics/server-load.ts
 * screenSamples): a late scrape, or a 0 read while a stream was receiving tokens through the
 * scrape, is set aside from Average active and the Requests-queued rule, with the cause on the cell.
 */
import { describe, expect, test } from 'vitest';
import { LATE_SCRAPE_MIN_MS, screenSamples } from '../../src/metrics/server-load.js';
import { computeCellFigures } from '../../src/metrics/figures.js';
import { cellStatuses } from '../../src/judge/status.js';
import type { MetricsSample } from '../../src/shapes/engine.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { samplesSetAsideNotes } from '../../src/pages/markdown-notes.js';
import type { CellResult } from '../../src/shapes/result.js';

/** `n` streams decoding all through [0, 5000] ms, a token every 10 ms */
function decoding(n: number): RequestTimeline[] {
  return Array.from({ length: n }, (_, k) => {
    const chunkMs = Array.from({ length: 500 }, (_, i) => 1 + k + i * 10);
    return { id: `r${k}`, sendMs: 0, sentHeadersMs: 0, firstTokenMs: chunkMs[0]!, chunkMs, chunkTokens: chunkMs.map(() => 1), tokenSource: 'usage' as const, reasoningTokens: 0 };
  });
}

const sample = (atMs: number, running: number, scrapeMs: number, extra: Partial<MetricsSample> = {}): MetricsSample => ({ atMs, running, waiting: 0, clientInFlight: 8, scrapeMs, ...extra });

describe('screenSamples', () => {
  test('a llama.cpp fork that reads 0 running with eight streams decoding: those samples are set aside, and the cell is not queued', () => {
    const timelines = decoding(8);
    const samples = [sample(1000, 8, 5), sample(2000, 0, 6), sample(3000, 8, 4), sample(4000, 0, 5)];
    const screened = screenSamples(samples, timelines);
    expect(screened.setAside).toEqual({ late: 0, zeroWhileStreaming: 2, of: 4, lateOverMs: LATE_SCRAPE_MIN_MS });
    // their counters stay; their running and waiting counts go
    expect(screened.samples[1]).not.toHaveProperty('running');
    expect(screened.samples[1]).not.toHaveProperty('waiting');
    const window = { windowStartMs: 500, windowEndMs: 4500 };
    const raw = computeCellFigures({ timelines, ...window, metricsSamples: samples });
    expect(raw.serverActiveRequests).toBe(4);
    const figures = computeCellFigures({ timelines, ...window, metricsSamples: screened.samples });
    expect(figures.serverActiveRequests).toBe(8);
    const judge = (s: readonly MetricsSample[], setAside = screened.setAside) =>
      cellStatuses({ concurrency: 8, figures, timelines, samples: s, ...window, loopDelayBoundMs: Infinity, ...(setAside ? { samplesSetAside: setAside } : {}) });
    expect(judge(samples, undefined).statuses).toEqual(['requests-queued']);
    const r = judge(screened.samples);
    expect(r.statuses).toEqual(['valid']);
    expect(r.evidence.metricSamplesSetAside).toEqual(screened.setAside);
  });

  test('a scrape that came back late is set aside; one as slow as the others is not', () => {
    const timelines = decoding(4);
    const samples = [sample(1000, 4, 4, { clientInFlight: 4 }), sample(2000, 2, 300, { clientInFlight: 4 }), sample(3000, 4, 6, { clientInFlight: 4 })];
    const screened = screenSamples(samples, timelines);
    expect(screened.setAside).toMatchObject({ late: 1, zeroWhileStreaming: 0, of: 3 });
    // every scrape slow alike (a busy server): the window's usual scrape sets the bound
    const slow = [sample(1000, 4, 150), sample(2000, 4, 180), sample(3000, 4, 220)];
    expect(screenSamples(slow, timelines).setAside).toBeUndefined();
  });

  test('a 0 that could be true is kept: nothing streaming, or a stream whose last token came during the scrape', () => {
    // no stream decoding at 2000: the server really was idle there
    const early = decoding(2).map((t) => ({ ...t, chunkMs: t.chunkMs.slice(0, 150), chunkTokens: t.chunkTokens.slice(0, 150) }));
    expect(screenSamples([sample(2000, 0, 5)], early).setAside).toBeUndefined();
    // the stream's last token came inside the scrape: the server may have finished it before reading its gauge
    const ending: RequestTimeline = { ...decoding(1)[0]!, chunkMs: [1000, 1010, 1996, 1998], chunkTokens: [1, 1, 1, 1] };
    expect(screenSamples([sample(2000, 0, 5)], [ending]).setAside).toBeUndefined();
    // a stream silent for 500 ms around the scrape (its usual gap 10 ms): waiting, not streaming
    const silent: RequestTimeline = { ...decoding(1)[0]!, chunkMs: [1700, 1710, 1720, 1730, 2230, 2240], chunkTokens: [1, 1, 1, 1, 1, 1] };
    expect(screenSamples([sample(2000, 0, 5)], [silent]).setAside).toBeUndefined();
  });

  test('the page names the cells and the causes', () => {
    const cell = { context: 0, concurrency: 8, evidence: { metricSamplesSetAside: { late: 1, zeroWhileStreaming: 2, of: 5, lateOverMs: 100 } } } as unknown as CellResult;
    const text = samplesSetAsideNotes([cell]).join('\n');
    expect(text).toContain('0/8: 3 of 5');
    expect(text).toMatch(/1 came back late \(over 100 ms/);
    expect(text).toContain('2 read 0 running while a stream was receiving tokens');
  });
});
