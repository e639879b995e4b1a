import { describe, expect, test } from 'vitest';
import { cpuTimeMs, startCpuMeter } from '../../src/load/client-cpu.js';
import { cellStatuses } from '../../src/judge/status.js';

describe('the load generator\'s CPU', () => {
  test('a busy loop on this thread reads about one core; an idle wait about none', async () => {
    expect(cpuTimeMs().source).toBe(process.platform === 'linux' ? 'thread' : 'process');
    const busy = startCpuMeter();
    const until = Date.now() + 300;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    // wide bounds: a loaded 2-core machine may give this thread half a core; ticks are 10 ms
    const b = busy.stop().cores;
    expect(b).toBeGreaterThan(0.3);
    expect(b).toBeLessThan(1.2);
    const idle = startCpuMeter();
    await new Promise((r) => setTimeout(r, 300));
    expect(idle.stop().cores).toBeLessThan(0.2);
  });

  test('over 0.9 of a core the cell is Client-limited, whatever the event-loop delay', () => {
    const base = {
      concurrency: 4,
      figures: { failedRequests: 0, clientActiveRequests: 4, activeRequestsDisagree: false },
      loopDelayMs: { p99: 5 },
      loopDelayBoundMs: 50,
    };
    expect(cellStatuses({ ...base, clientCpuCores: 0.5 }).statuses).toEqual(['valid']);
    const limited = cellStatuses({ ...base, clientCpuCores: 0.95 });
    expect(limited.status).toBe('client-limited');
    expect(limited.evidence.clientLimited).toEqual({ eventLoopDelayP99Ms: 5, boundMs: 50, cpuCores: 0.95, cpuBoundCores: 0.9 });
  });
});
