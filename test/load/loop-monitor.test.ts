import { describe, expect, it } from 'vitest';
import { EventLoopMonitor, startLoopMonitor } from '../../src/load/loop-monitor.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('EventLoopMonitor', () => {
  it('sees a blocked event loop', async () => {
    const m = startLoopMonitor(10);
    await sleep(50);
    const until = performance.now() + 120;
    while (performance.now() < until) {
      // block the loop
    }
    await sleep(50);
    expect(m.samples).toBeGreaterThan(0);
    const s = m.stop()!;
    expect(Object.keys(s).sort()).toEqual(['max', 'p50', 'p99']);
    expect(s.max).toBeGreaterThanOrEqual(80);
    expect(s.p50).toBeLessThanOrEqual(s.p99);
    expect(s.p99).toBeLessThanOrEqual(s.max);
  });

  it('is undefined before start and after stop; rejects a bad resolution', () => {
    const m = new EventLoopMonitor();
    expect(m.read()).toBeUndefined();
    expect(m.stop()).toBeUndefined();
    expect(() => new EventLoopMonitor(0)).toThrow(/resolutionMs/);
  });
});
