/**
 * Issue 24: the lag of response reads (src/client/arrival-clock.ts). Reads handled in one turn of
 * the event loop were ready together; each is late by the time the reads before it took, and by
 * the thread's wait for a core before the turn.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { arrivalNow, arrivalReader, startArrivalLagMeter } from '../../src/client/arrival-clock.js';
import { parseSchedstat, readCoreWait, type CoreWaitReading } from '../../src/client/core-wait.js';

/** a thread that never waits for a core: the tests of the in-turn part alone */
const neverWaits = { read: (): CoreWaitReading => ({ waitedMs: 0, slices: 1 }), close: () => {} };

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the turn goes on
  }
}

test('reads of one turn count their lag from the turn\'s first read; a new turn starts from zero', async () => {
  const meter = startArrivalLagMeter({ coreWait: neverWaits });
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
  const meter = startArrivalLagMeter({ coreWait: neverWaits });
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

describe('the wait for a core before a turn (Linux schedstat; here a scripted source)', () => {
  /** readings in order; `closed` says whether the meter let go of it */
  function scripted(readings: (CoreWaitReading | undefined)[]) {
    const src = { reads: 0, closed: false, read: () => readings[Math.min(src.reads++, readings.length - 1)], close: () => void (src.closed = true) };
    return src;
  }

  test("is added to every read of the turn it delayed: the wait since the last turn's end, shared over the times the thread ran since", async () => {
    await new Promise((r) => setImmediate(r));
    // turn 1 starts (reading 0: no turn has ended yet, so no wait), ends (reading 1); turn 2
    // starts after 6 ms more of waiting over 2 times on a core (reading 2): 3 ms before it
    const src = scripted([
      { waitedMs: 100, slices: 10 },
      { waitedMs: 100, slices: 10 },
      { waitedMs: 106, slices: 12 },
      { waitedMs: 106, slices: 12 },
    ]);
    const meter = startArrivalLagMeter({ coreWait: src });
    arrivalNow();
    await new Promise((r) => setImmediate(r));
    arrivalNow();
    arrivalNow();
    const s = meter.stop()!;
    expect(s.reads).toBe(3);
    expect(s.withCoreWait).toBe(true);
    // the second turn's two reads: 3 ms and a little more; the first turn's read: about 0
    expect(s.max).toBeGreaterThanOrEqual(3);
    expect(s.max).toBeLessThan(3 + 50); // plus how long two stamps took on a loaded machine
    // the median is the second turn's first read: 3 ms exactly (its 0.1 ms bin's upper edge), not
    // the whole 6 ms the thread waited since the first turn
    expect(s.p50).toBeGreaterThanOrEqual(3);
    expect(s.p50).toBeLessThanOrEqual(3.1 + 1e-9);
    expect(src.closed).toBe(true);
  });

  test.each([
    ['a reading that goes missing', { waitedMs: 40, slices: 3 }, undefined],
    ['a wait that went back', { waitedMs: 50, slices: 3 }, { waitedMs: 40, slices: 4 }],
  ])('%s adds nothing', async (_name, atEnd, atStart) => {
    await new Promise((r) => setImmediate(r));
    // turn 1 starts (reading 0), ends (reading 1: atEnd); turn 2 starts (reading 2: atStart)
    const src = scripted([{ waitedMs: 0, slices: 1 }, atEnd, atStart]);
    const meter = startArrivalLagMeter({ coreWait: src });
    arrivalNow();
    await new Promise((r) => setImmediate(r));
    arrivalNow();
    const s = meter.stop()!;
    expect(src.reads).toBe(3);
    expect(s.reads).toBe(2);
    expect(s.max).toBeLessThan(1);
  });

  test("on Linux the meter reads this thread's own schedstat (elsewhere it says it could not)", () => {
    const linux = existsSync('/proc/thread-self/schedstat') && !readFileSync('/proc/thread-self/schedstat', 'utf8').startsWith('0 ');
    const meter = startArrivalLagMeter();
    arrivalNow();
    expect(meter.stop()!.withCoreWait).toBe(linux);
    if (linux) {
      const r = readCoreWait()!;
      expect(r.waitedMs).toBeGreaterThanOrEqual(0);
      expect(r.slices).toBeGreaterThan(0);
    }
  });

  test('the file is read as the kernel writes it; a kernel that counts nothing gives no reading', () => {
    const bytes = (text: string) => Buffer.from(text, 'latin1');
    expect(parseSchedstat(bytes('120000000 3500000 42\n'))).toEqual({ waitedMs: 3.5, slices: 42 });
    // a day of waiting in ns is still exact
    expect(parseSchedstat(bytes('98765432101234 86400000000000 123456789\n'))).toEqual({ waitedMs: 86_400_000, slices: 123_456_789 });
    // only the first `length` bytes count (a kept buffer, read again)
    expect(parseSchedstat(bytes('5 2000000 7\n999999'), 12)).toEqual({ waitedMs: 2, slices: 7 });
    expect(parseSchedstat(bytes('0 0 0\n'))).toBeUndefined();
    expect(parseSchedstat(bytes(''))).toBeUndefined();
    expect(parseSchedstat(bytes('12 x 3\n'))).toBeUndefined();
  });
});
