/**
 * Issue 24: the in-turn lag of response reads (src/client/arrival-clock.ts). Reads handled in one
 * turn of the event loop were ready together; each is late by the time the reads before it took.
 */
import { expect, test } from 'vitest';
import { arrivalNow, arrivalReader, startArrivalLagMeter } from '../../src/client/arrival-clock.js';

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

test('a body\'s later reads in one turn (one big chunk in 64 KB reads) count once; another body\'s read after them counts the time they took', async () => {
  // a fresh turn (the test before may have read in this one)
  await new Promise((r) => setImmediate(r));
  const meter = startArrivalLagMeter();
  const big = arrivalReader();
  const other = arrivalReader();
  // one turn: the big body's 20 reads, 0.5 ms of handling each, then the other body's read
  for (let i = 0; i < 20; i++) {
    arrivalNow(big);
    spin(0.5);
  }
  const late = arrivalNow(other);
  // the next turn: the big body reads again, and counts again
  await new Promise((r) => setImmediate(r));
  arrivalNow(big);
  const s = meter.stop()!;
  // the big body's first read, the other's, and the big body's in the next turn
  expect(s.reads).toBe(3);
  expect(late).toBeGreaterThan(0);
  // the other body waited ~10 ms behind the big one (a loaded machine only adds)
  expect(s.max).toBeGreaterThanOrEqual(9.9);
  expect(s.p50).toBeLessThan(1);
});

test('no meter, nothing counted; a meter without a read says so', () => {
  arrivalNow();
  const meter = startArrivalLagMeter();
  expect(meter.stop()).toBeUndefined();
});
