/**
 * The per-request file (LLM_BENCH_REQUESTS_FILE, issue 59): one JSON line a request, a line's
 * fields from its timeline and the cell's window, secrets out of error messages; the file holds one
 * run (another run's lines are replaced, the same run's appended to, a resumed run's kept), lines
 * go out in batches, and a path that cannot be written (here a folder) is an error naming the setting.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { requestRecord } from '../../src/metrics/request-records.js';
import { RequestsFile } from '../../src/results/requests-file.js';
import type { RequestRecord } from '../../src/shapes/request-record.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { redactSecrets, redactValues } from '../../src/redact.js';

const cell = { run: '2026-12-07T10:00:00.000Z', kind: 'decode' as const, cell: '1K/2', context: 1024, concurrency: 2, repeat: 1 };
const window = { windowStartMs: 1000, windowEndMs: 3000 };
const noRedact = (t: string) => t;

/** a request sent at `sendMs`, headers written 2 ms later, a token every 10 ms from `firstMs`, `n` tokens */
function timeline(id: string, sendMs: number, firstMs: number, n: number, end?: RequestTimeline['end']): RequestTimeline {
  const chunkMs = Array.from({ length: n }, (_, i) => firstMs + i * 10);
  return { id, sendMs, sentHeadersMs: sendMs + 2, firstTokenMs: firstMs, chunkMs, chunkTokens: chunkMs.map(() => 1), tokenSource: 'usage', reasoningTokens: 0, promptTokens: 1024, ...(end ? { end } : {}) };
}

describe('a request\'s line', () => {
  test('times in seconds from the window\'s opening; TTFT from the headers written, as the cell\'s; tokens in and out of the window', () => {
    const line = requestRecord(cell, timeline('a', 900, 950, 30, { kind: 'done', atMs: 1241 }), window, noRedact);
    expect(line).toMatchObject({ ...cell, id: 'a', sentS: -0.1, firstTokenS: -0.05, lastTokenS: 0.24, endS: 0.241, ttftMs: 48, e2eMs: 338, tpotMs: 10, outputTokens: 30, windowTokens: 25, promptTokens: 1024, end: 'done', completedInWindow: true });
    expect(line.itl).toEqual({ gaps: 29, meanMs: 10, medianMs: 10, p99Ms: 10, maxMs: 10 });
    expect(line.error).toBeUndefined();
  });

  test('a request the window closed on is aborted, not completed (its tokens to the window\'s end, inclusive, counted); one still open has no end; one token has no gaps and no TPOT', () => {
    expect(requestRecord(cell, timeline('b', 2900, 2950, 10, { kind: 'aborted', atMs: 3000 }), window, noRedact)).toMatchObject({ end: 'aborted', completedInWindow: false, windowTokens: 6 });
    const open = requestRecord(cell, timeline('c', 2990, 2999, 1), window, noRedact);
    expect(open).toMatchObject({ end: 'open', completedInWindow: false, outputTokens: 1 });
    expect(open.endS).toBeUndefined();
    expect(open.itl).toBeUndefined();
    expect(open.tpotMs).toBeUndefined();
  });

  test('an error keeps its code, status and message, with the API key and any bearer token taken out', () => {
    const key = 'sk-live-123456';
    const redact = (t: string) => redactSecrets(redactValues(t, [key]));
    const t = timeline('d', 1100, 1150, 3, { kind: 'error', atMs: 1200, code: 'http-status', httpStatus: 401, message: `HTTP 401: key ${key} rejected; Authorization: Bearer ${key}` });
    const line = requestRecord(cell, t, window, redact);
    expect(line.error).toEqual({ code: 'http-status', httpStatus: 401, message: 'HTTP 401: key <redacted> rejected; Authorization: Bearer <redacted>' });
    expect(JSON.stringify(line)).not.toContain(key);
  });

  test('a rate cell\'s request says when the schedule wanted it sent', () => {
    const line = requestRecord({ ...cell, kind: 'rate', cell: '1K@2/s', concurrency: undefined, rate: 2 }, timeline('e', 1500, 1540, 4), window, noRedact, 1490);
    expect(line).toMatchObject({ kind: 'rate', rate: 2, scheduledS: 0.49, sentS: 0.5 });
  });
});

describe('the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-requests-'));
  const lines = (run: string, n: number, from = 0): RequestRecord[] =>
    Array.from({ length: n }, (_, i) => requestRecord({ ...cell, run }, timeline(`r${from + i}`, 1100, 1150, 3), window, noRedact));
  const read = (path: string) => readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as RequestRecord);

  test('another run\'s lines are replaced; later cells and bench files of the same run append; a resumed run keeps what is there', () => {
    const path = join(dir, 'sub', 'requests.jsonl');
    const first = new RequestsFile(path, 'run-1', false);
    first.prepare();
    expect(first.append(lines('run-1', 3))).toBe(3);
    expect(first.append(lines('run-1', 2, 3))).toBe(2);
    // a second bench file of the same invocation
    const sameRun = new RequestsFile(path, 'run-1', false);
    sameRun.prepare();
    sameRun.append(lines('run-1', 1, 5));
    expect(read(path).map((l) => l.id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    // a resumed run appends to the run it continues
    const resumed = new RequestsFile(path, 'run-2', true);
    resumed.prepare();
    resumed.append(lines('run-2', 1, 6));
    expect(read(path)).toHaveLength(7);
    // the next run starts the file afresh
    const next = new RequestsFile(path, 'run-3', false);
    next.prepare();
    expect(readFileSync(path, 'utf8')).toBe('');
    next.append(lines('run-3', 2));
    expect(read(path).map((l) => l.run)).toEqual(['run-3', 'run-3']);
  });

  test('a file that holds anything but request lines (a prompt file, a result named by mistake) is refused, never emptied', () => {
    for (const [name, text] of [['prompts.jsonl', '{"text": "Hello"}\n'], ['speed-matrix.json', '{\n  "schemaVersion": 2\n}\n'], ['notes.txt', 'not json\n']] as const) {
      const path = join(dir, name);
      writeFileSync(path, text);
      expect(() => new RequestsFile(path, 'run-x', false).prepare()).toThrow(/LLM_BENCH_REQUESTS_FILE: .* holds something other than request lines, so it is not overwritten/);
      expect(readFileSync(path, 'utf8')).toBe(text);
    }
  });

  test("a first line longer than a read (a long error text) is still read whole: the same run's file is appended to", () => {
    const path = join(dir, 'long.jsonl');
    const long = { ...lines('run-long', 1)[0]!, error: { code: 'http-status', message: 'x'.repeat(200_000) } };
    writeFileSync(path, `${JSON.stringify(long)}\n`);
    const file = new RequestsFile(path, 'run-long', false);
    file.append(lines('run-long', 1, 1));
    expect(read(path)).toHaveLength(2);
  });

  test('5,001 lines go out in batches, every one whole', () => {
    const path = join(dir, 'big.jsonl');
    const file = new RequestsFile(path, 'run-big', false);
    function* many() {
      for (let i = 0; i < 5001; i++) yield requestRecord({ ...cell, run: 'run-big' }, timeline(`m${i}`, 1100, 1150, 2), window, noRedact);
    }
    expect(file.append(many())).toBe(5001);
    const got = read(path);
    expect(got).toHaveLength(5001);
    expect(got[5000]!.id).toBe('m5000');
  });

  test('a folder given as the path is an error naming the setting', () => {
    const file = new RequestsFile(dir, 'run', false);
    expect(() => file.prepare()).toThrow(/LLM_BENCH_REQUESTS_FILE: cannot write/);
  });
});
