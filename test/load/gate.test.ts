/**
 * The readiness gate's test for a server at its running limit (load/cell.ts serverAtLimit): requests
 * waiting while every request the server runs is one of ours that is decoding. A request in prefill
 * runs without a token yet (or, on SGLang, in neither count), so a server still admitting is not at its limit.
 */
import { describe, expect, test } from 'vitest';
import { serverAtLimit } from '../../src/load/cell.js';

const decoding = (n: number, of: number) => Array.from({ length: of }, (_, i) => i < n);

describe('serverAtLimit', () => {
  test('8 running, all 8 decoding, 8 waiting: at the limit, with the counts', () => {
    expect(serverAtLimit({ running: 8, waiting: 8 }, decoding(8, 16), 16)).toEqual({ running: 8, waiting: 8 });
  });
  test('a running request still in prefill (running above the decoding workers): still admitting', () => {
    expect(serverAtLimit({ running: 8, waiting: 8 }, decoding(7, 16), 16)).toBeUndefined();
  });
  test('SGLang chunk-prefilling a request (in neither count): running + waiting short of ours in flight, still admitting', () => {
    // 16 in flight: 6 decoding and running, 9 waiting, 1 in chunked prefill that SGLang counts nowhere
    expect(serverAtLimit({ running: 6, waiting: 9 }, decoding(6, 16), 16)).toBeUndefined();
    expect(serverAtLimit({ running: 6, waiting: 10 }, decoding(6, 16), 16)).toEqual({ running: 6, waiting: 10 });
  });
  test('nothing waiting: no limit in sight (the usual gate decides)', () => {
    expect(serverAtLimit({ running: 8, waiting: 0 }, decoding(8, 8), 8)).toBeUndefined();
  });
  test('without the running or waiting metric, or with nothing running: not judged', () => {
    expect(serverAtLimit({ waiting: 3 }, decoding(4, 8), 7)).toBeUndefined();
    expect(serverAtLimit({ running: 4 }, decoding(4, 8), 4)).toBeUndefined();
    expect(serverAtLimit({ running: 0, waiting: 8 }, decoding(0, 8), 8)).toBeUndefined();
  });
});
