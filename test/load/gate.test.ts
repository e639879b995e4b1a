/**
 * The readiness gate's test for a server at its running limit (load/cell.ts serverAtLimit): requests
 * waiting while every request the server runs is one of ours that is decoding. A request in prefill
 * runs without a token yet, so a server still admitting is not at its limit.
 */
import { describe, expect, test } from 'vitest';
import { serverAtLimit } from '../../src/load/cell.js';

const decoding = (n: number, of: number) => Array.from({ length: of }, (_, i) => i < n);

describe('serverAtLimit', () => {
  test('8 running, all 8 decoding, 8 waiting: at the limit, with the counts', () => {
    expect(serverAtLimit({ running: 8, waiting: 8 }, decoding(8, 16))).toEqual({ running: 8, waiting: 8 });
  });
  test('a running request still in prefill (running above the decoding workers): still admitting', () => {
    expect(serverAtLimit({ running: 8, waiting: 8 }, decoding(7, 16))).toBeUndefined();
  });
  test('nothing waiting: no limit in sight (the usual gate decides)', () => {
    expect(serverAtLimit({ running: 8, waiting: 0 }, decoding(8, 8))).toBeUndefined();
  });
  test('without the running or waiting metric, or with nothing running: not judged', () => {
    expect(serverAtLimit({ waiting: 3 }, decoding(4, 8))).toBeUndefined();
    expect(serverAtLimit({ running: 4 }, decoding(4, 8))).toBeUndefined();
    expect(serverAtLimit({ running: 0, waiting: 8 }, decoding(0, 8))).toBeUndefined();
  });
});
