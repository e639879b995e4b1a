/**
 * The other workload kinds in a whole run, as a user runs them (`npx vitest bench --run` on the
 * tiny simulator; issue 23, "Workloads run in both kinds of row" and "for multi-turn, TTFT per
 * turn and the history length"):
 * - multiTurn: the one row is the first turn's system + user tokens; the cell records each turn's
 *   requests, TTFT and prompt length, and each later turn re-sends the history (the previous
 *   prompt, its reply of max_tokens, a new user message); the page has the turn table.
 * - lengths with an open-loop rate cell: the rate cell, like the decode cell, records the lengths
 *   it sent (inside the configured ranges) and a prefix-cache hit rate near 0 (every request has
 *   its own lead), and the page lists it in the Workload section.
 * - multiTurn with rate cells is refused before any cell, naming LLM_BENCH_RATES.
 * - multiTurn whose first turn is past the max model length, or sharedPrefix whose requests are:
 *   every cell Not run, with the sum; a multiTurn turn after the first that can pass it: a line at
 *   the run's start.
 * (How far later-turn TTFT drops is checked against the simulator's truth in
 * test/accuracy/multi-turn.test.ts.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { validateResult } from '../../src/results/validate.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { runVitest } from '../compare/run-vitest.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-wl-kinds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = (out: string) => ({
  LLM_BENCH_SIM_PROFILE: 'tiny',
  // every request streams its max_tokens, so a reply's length is known
  LLM_BENCH_SIM_OVERRIDES: '{"eosProbability":0}',
  LLM_BENCH_OUT: join(dir, out),
  LLM_BENCH_THRESHOLDS: join(dir, `${out}-thresholds.json`),
});

function read(out: string): SpeedMatrixResult {
  const json = JSON.parse(readFileSync(join(dir, out, 'speed-matrix.json'), 'utf8'));
  const valid = validateResult(json);
  expect(valid.ok, JSON.stringify(valid)).toBe(true);
  return json as SpeedMatrixResult;
}

describe('workload kinds in a whole run', () => {
  test('multiTurn: per-turn TTFT and history length in the JSON and on the page', { timeout: 120_000 }, () => {
    const SYSTEM = 256;
    const USER = 128;
    const REPLY = 16;
    // a drawn think time: a fixed one on the sim's 10 ms step grid can line a turn's send up with
    // the metrics scrape, which then counts the request on the client before the server has read
    // it (about 1 run in 10 read Requests queued with think=100ms, C = 2, 3 s)
    const r = runVitest(['bench', '--run'], {
      ...base('multi'),
      LLM_BENCH_WORKLOAD: `multiTurn:turns=3,user=${USER},system=${SYSTEM},think=uniform(50ms,150ms)`,
      LLM_BENCH_CONCURRENCY: '2',
      LLM_BENCH_MAX_TOKENS: String(REPLY),
      LLM_BENCH_DURATION_S: '3',
    });
    expect(r.code, r.out).toBe(0);
    const json = read('multi');
    expect(json.info.run.workload).toEqual({ kind: 'multiTurn', text: `multiTurn:turns=3,user=${USER},system=${SYSTEM},think=uniform(0.05s,0.15s),seed=1` });
    expect(json.info.run.contexts).toEqual([SYSTEM + USER]);
    const cell = json.cells[0]!;
    expect([cell.contextLabel, cell.concurrency, cell.status]).toEqual(['384', 2, 'valid']);
    const turns = cell.workload!.turns!;
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3]);
    for (const t of turns) {
      expect(t.requests, `turn ${t.turn}`).toBeGreaterThan(2);
      expect(t.ttftMs?.median).toBeGreaterThan(0);
      // the history: turn t re-sends every earlier user message and reply (a few template tokens aside)
      const history = SYSTEM + USER + (t.turn - 1) * (REPLY + USER);
      expect(Math.abs(t.promptTokensMean! - history), `turn ${t.turn}: ${t.promptTokensMean} vs ${history}`).toBeLessThanOrEqual(4 * t.turn);
    }
    // later turns re-send what the server has cached
    expect(cell.workload!.prefixCache!.hitRate).toBeGreaterThan(0.3);
    const md = readFileSync(join(dir, 'multi', 'speed-matrix.md'), 'utf8');
    expect(md).toContain('| Cell | Turn | Requests | Prompt tokens (mean) | TTFT p50 | TTFT p90 |');
    expect(md).toMatch(/\| 384\/2 \| 3 \| \d+ \| 6\d\d \| \d+ ms \| \d+ ms \|/);
  });

  test('lengths in an open-loop rate cell: its sent lengths and hit rate, on the page; its Over capacity reads the drawn lengths, not the run\'s max output', { timeout: 120_000 }, () => {
    const r = runVitest(['bench', '--run'], {
      ...base('rates'),
      // a KV cache of 20,000 tokens: at the run's 2,048 max output tokens, Little's law would put
      // 8/s × (TTFT + 2,047 × 10 ms) ≈ 165 requests of 2,348 tokens in flight, and 8/s was Over
      // capacity; the requests ask for at most 24 (about 2 in flight of 316)
      LLM_BENCH_SIM_OVERRIDES: '{"eosProbability":0,"kvCapacityTokens":20000}',
      LLM_BENCH_WORKLOAD: 'lengths:in=uniform(200,400),out=uniform(8,24)',
      LLM_BENCH_CONCURRENCY: '1',
      LLM_BENCH_RATES: '8',
      LLM_BENCH_ARRIVAL: 'constant',
      LLM_BENCH_RAMP_S: '0.5',
      LLM_BENCH_MAX_TOKENS: '2048',
      LLM_BENCH_DURATION_S: '2',
    });
    expect(r.code, r.out).toBe(0);
    const json = read('rates');
    expect(json.info.run.contexts).toEqual([300]);
    const rate = json.rateCells!.find((c) => c.rate === 8)!;
    expect(rate.contextLabel).toBe('300');
    // Valid, or Client-limited by the machine: on a crowded 2-core CI machine the client's own
    // timing or sends may be late in a 2-second window (CI read a 300@8 cell Client-limited once,
    // allowed there: the embedded simulator shares the client's 2 cores). Never held back by the
    // in-flight ceiling at 8 req/s, never Errors or Saturated.
    const others = rate.statuses.filter((s) => s !== 'client-limited');
    expect(others, JSON.stringify(rate.evidence)).toEqual(rate.status === 'client-limited' ? [] : ['valid']);
    if (rate.status === 'client-limited') {
      expect(rate.evidence.clientLimited!.causes).not.toContain('in-flight-ceiling');
      console.log(`[rates] 300@8 read Client-limited on this machine (${JSON.stringify(rate.evidence.clientLimited)}); its lengths are checked all the same`);
    }
    for (const w of [json.cells[0]!.workload!, rate.workload!]) {
      expect(w.inputTokens!.requests).toBeGreaterThan(8);
      expect(w.inputTokens!.min).toBeGreaterThanOrEqual(200);
      expect(w.inputTokens!.max).toBeLessThanOrEqual(400);
      // not all one length: drawn per request
      expect(w.inputTokens!.sd).toBeGreaterThan(20);
      expect(w.outputTokens!.min).toBeGreaterThanOrEqual(8);
      expect(w.outputTokens!.max).toBeLessThanOrEqual(24);
      expect(w.prefixCache!.hitRate).toBeLessThan(0.05);
    }
    expect(readFileSync(join(dir, 'rates', 'speed-matrix.md'), 'utf8')).toMatch(/\| 300@8 \| \d+ \| \d{3} \(/);
  });

  test('multiTurn with rate cells is refused before any cell, naming LLM_BENCH_RATES', { timeout: 60_000 }, () => {
    const r = runVitest(['bench', '--run'], { ...base('refused'), LLM_BENCH_QUIET: '0', LLM_BENCH_WORKLOAD: 'multiTurn:turns=2', LLM_BENCH_RATES: '4' });
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toContain('LLM_BENCH_WORKLOAD: a multiTurn workload runs in the closed-loop cells only');
    expect(r.out).toContain('Set LLM_BENCH_RATES=none');
    expect(r.out).not.toMatch(/scout request|running (decode )?\d+\/\d+/);
  });

  test("multiTurn: a first turn past the max model length makes every cell Not run, the one Over capacity would hold too, and no later-turn line", { timeout: 60_000 }, () => {
    // max model length 1,000: the first turn holds 256 + 128 + 1,024 = 1,408; 4 × 1,408 > the 4,096-token KV cache
    const r = runVitest(['bench', '--run'], {
      ...base('first-turn'),
      LLM_BENCH_QUIET: '0',
      LLM_BENCH_SIM_OVERRIDES: '{"eosProbability":0,"maxModelLen":1000,"kvCapacityTokens":4096}',
      LLM_BENCH_WORKLOAD: 'multiTurn:turns=3,user=128,system=256',
      LLM_BENCH_CONCURRENCY: '1,4',
      LLM_BENCH_MAX_TOKENS: '1024',
      LLM_BENCH_DURATION_S: '1',
    });
    expect(r.code, r.out).not.toBe(0);
    const why = "a conversation's first turn (system 256 + user 128 + 1024 output tokens) = 1408 tokens exceeds the server's max model length 1000; lower system= or user= in LLM_BENCH_WORKLOAD, or LLM_BENCH_MAX_TOKENS";
    const cells = read('first-turn').cells;
    expect(cells.map((c) => [c.concurrency, c.status, c.notRunReason])).toEqual([
      [1, 'not-run', why],
      [4, 'not-run', why],
    ]);
    expect(r.out).not.toContain('multiTurn: turn');
  });

  test("multiTurn's Over capacity reads its last turn, which every conversation reaches, not its first", { timeout: 60_000 }, () => {
    // turn 1: 256 + 128 + 200 = 584 (4 × 584 fit 4,096); turn 3: 256 + 3 × 128 + 2 × (200 + 32) + 200 = 1,304, and 4 × 1,304 = 5,216 do not
    const r = runVitest(['bench', '--run'], {
      ...base('last-turn'),
      LLM_BENCH_QUIET: '0',
      LLM_BENCH_SIM_OVERRIDES: '{"eosProbability":0,"kvCapacityTokens":4096}',
      LLM_BENCH_WORKLOAD: 'multiTurn:turns=3,user=128,system=256,think=50ms',
      LLM_BENCH_CONCURRENCY: '1,4',
      LLM_BENCH_MAX_TOKENS: '200',
      LLM_BENCH_DURATION_S: '1',
    });
    const cells = read('last-turn').cells;
    expect(cells.map((c) => [c.concurrency, c.status])).toEqual([
      [1, expect.not.stringMatching(/over-capacity|not-run/)],
      [4, 'over-capacity'],
    ]);
    expect(cells[1]!.evidence.capacity).toMatchObject({ requestTokens: 1304, requiredTokens: 5216, kvCapacityTokens: 4096 });
    // the numbers, on the progress line and the page (the legend's "at this context" is not the request here)
    const sum = '4 × 1,304 tokens a request (its prompt and max output) = 5,216 tokens > KV capacity 4,096';
    expect(r.out).toContain(`384/4: Over capacity · ${sum} · 2/2 done`);
    expect(readFileSync(join(dir, 'last-turn', 'speed-matrix.md'), 'utf8')).toContain(
      `A workload row's requests are not its context: its Over capacity weighs a conversation's last turn (every reply before it at the max output; at most the max model length). 384/4: ${sum}.`,
    );
  });

  test('sharedPrefix past the max model length: every column Not run, the one Over capacity would hold too', { timeout: 60_000 }, () => {
    // 512 + 128 + 512 = 1,152 > 1,000; 4 × 1,152 > the 4,096-token KV cache
    const r = runVitest(['bench', '--run'], {
      ...base('shared-long'),
      LLM_BENCH_QUIET: '0',
      LLM_BENCH_SIM_OVERRIDES: '{"eosProbability":0,"maxModelLen":1000,"kvCapacityTokens":4096}',
      LLM_BENCH_WORKLOAD: 'sharedPrefix:groups=2,prefix=512,suffix=128',
      LLM_BENCH_CONCURRENCY: '1,4',
      LLM_BENCH_MAX_TOKENS: '512',
      LLM_BENCH_DURATION_S: '1',
      // the row's capacity search says why it did not run
      LLM_BENCH_SLO: 'perRequest>=1',
    });
    expect(r.code, r.out).not.toBe(0);
    const why = "prefix 512 + suffix 128 + 512 output tokens = 1152 tokens exceeds the server's max model length 1000; lower prefix= or suffix= in LLM_BENCH_WORKLOAD, or LLM_BENCH_MAX_TOKENS";
    expect(read('shared-long').cells.map((c) => [c.concurrency, c.status, c.notRunReason])).toEqual([
      [1, 'not-run', why],
      [4, 'not-run', why],
    ]);
    expect(r.out).toContain(`capacity 640: not searched: ${why}`);
  });

  test('multiTurn whose later turn can pass the max model length: the run says which at its start', { timeout: 60_000 }, () => {
    // turn 1: 256 + 128 + 200 = 584 fits 900; turn 2: 256 + 2 × 328 + 32 = 944 can pass it
    const r = runVitest(['bench', '--run'], {
      ...base('later-turn'),
      LLM_BENCH_QUIET: '0',
      LLM_BENCH_SIM_OVERRIDES: '{"eosProbability":0,"maxModelLen":900}',
      LLM_BENCH_WORKLOAD: 'multiTurn:turns=3,user=128,system=256,think=50ms',
      LLM_BENCH_CONCURRENCY: '1',
      LLM_BENCH_MAX_TOKENS: '200',
      LLM_BENCH_DURATION_S: '1',
      LLM_BENCH_ALLOW_ERRORS: '1',
    });
    expect(r.out).toContain(
      "multiTurn: turn 2 of 3 can hold about 944 tokens (system 256 + 2 × (user 128 + max output 200) + about 32 of chat template for the 1 reply it re-sends), over the server's max model length 900",
    );
    // said, not refused: the cell ran
    expect(read('later-turn').cells[0]!.status).not.toBe('not-run');
  });
});
