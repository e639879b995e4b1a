/**
 * sampleMetrics (src/load/session.ts): the server's metrics scraped through the window, each
 * sample with the client's in-flight count. A scrape answered after the window is not a window
 * sample: against llama.cpp with more streams than its HTTP threads, a scrape sent before the end
 * waited for a thread and read the server after the workers had stopped (0 running, 0 in flight).
 */
import { describe, expect, test } from 'vitest';
import { monoMs } from '../../src/clock.js';
import { sampleMetrics, sleep, type LoadSession } from '../../src/load/session.js';
import type { MetricsSample } from '../../src/shapes/engine.js';

/** a session whose scrape takes `scrapeMs` and reads `running` (answered times in `answered`) */
function slowScrapes(scrapeMs: number, running: () => number, answered: number[]): LoadSession {
  const adapter = {
    async readMetrics(): Promise<MetricsSample> {
      const startMs = monoMs();
      await sleep(scrapeMs);
      answered.push(monoMs());
      return { atMs: (startMs + monoMs()) / 2, running: running() };
    },
  };
  return { adapter, target: {}, facts: {} } as unknown as LoadSession;
}

describe('sampleMetrics', () => {
  test('a scrape answered after the window is dropped, with what it read; the ones answered inside are kept', async () => {
    const fromMs = monoMs();
    const untilMs = fromMs + 300;
    let inFlight = 8;
    // the load stops at the window's end: a late answer reads an idle server
    const stop = setTimeout(() => (inFlight = 0), 310);
    const answered: number[] = [];
    // scrapes of 180 ms back to back: the second, sent at 180 ms and answered at 360, has its
    // midpoint (270) inside the window but read the server after it
    const samples = await sampleMetrics(slowScrapes(180, () => (monoMs() > untilMs ? 0 : 4), answered), {
      fromMs,
      untilMs,
      intervalMs: 100,
      inFlight: () => inFlight,
      signal: new AbortController().signal,
    });
    clearTimeout(stop);
    const late = answered.filter((t) => t > untilMs);
    expect(late.length, `answered at ${answered.map((t) => Math.round(t - fromMs)).join(', ')} ms`).toBeGreaterThan(0);
    // every late answer left out (one answered right at the end may be judged after it too)
    expect(samples.length).toBeLessThanOrEqual(answered.length - late.length);
    expect(samples.length).toBeGreaterThan(0);
    for (const s of samples) {
      expect(s.running).toBe(4);
      expect(s.clientInFlight).toBe(8);
    }
  });
});
