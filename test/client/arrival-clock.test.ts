/**
 * Issue 24: the in-turn lag of response reads (src/client/arrival-clock.ts). Reads handled in one
 * turn of the event loop were ready together; each is late by the time the reads before it took.
 */
import { expect, test } from 'vitest';
import { arrivalNow, startArrivalLagMeter } from '../../src/client/arrival-clock.js';

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the turn goes on
  }
}

test('reads of one turn count their lag from the turn\'s first read; a new turn starts from zero', async () => {
  const meter = startArrivalLagMeter();
  // one turn: 10 reads, 1 ms of handling each
  const stamps: number[] = [];
  for (let i = 0; i < 10; i++) {
    stamps.push(arrivalNow());
    spin(1);
  }
  await new Promise((r) => setImmediate(r));
  // the next turn: one read, at once
  arrivalNow();
  const s = meter.stop()!;
  expect(s.reads).toBe(11);
  // the 10th read of the first turn was ~9 ms after its first (a loaded machine only adds)
  expect(s.max).toBeGreaterThanOrEqual(stamps[9]! - stamps[0]! - 0.001);
  expect(s.max).toBeGreaterThanOrEqual(8.9);
  // half the reads were at most ~4-5 ms late; the p99 is the 10th read's bin (its upper edge)
  expect(s.p50).toBeLessThan(s.p99);
  expect(s.p99).toBeGreaterThanOrEqual(8.9);
  expect(s.p99).toBeLessThanOrEqual(s.max + 1e-9);
});

test('no meter, nothing counted; a meter without a read says so', () => {
  arrivalNow();
  const meter = startArrivalLagMeter();
  expect(meter.stop()).toBeUndefined();
});
