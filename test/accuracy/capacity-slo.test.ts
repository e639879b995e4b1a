/**
 * Capacity at an SLO against the simulator's ground truth: for 3 SLOs × 3 contexts on the fitted
 * sglang-h200 profile, the capacity search (the matrix columns, then nextProbe's bisection, then
 * one confirmation cell, as src/matrix/capacity-test.ts runs it) finds, with the real client
 * against the threaded sim, a capacity within ±1 user or ±5 % of the truth; and it adds at most
 * ⌈log2(gap)⌉ + 1 cells per context and SLO (maxSearchCells of the columns' bracket).
 *
 * The truth (capacity-truth.ts) is computed before any cell is measured, from the profile alone:
 * a dense sweep C = 1 … 64 in virtual time with the product's figure code and sloVerdict.
 *
 * Setup, and why:
 * - the fitted profile (steps of 16.7 ms + 0.093 ms per request + 3·10⁻⁶ ms per KV token; a serial
 *   frontend of 2.6 µs per prompt token whose work holds back the streams; 1,441,792 KV tokens),
 *   with eosProbability 0 so every request runs to its max output;
 * - max output 20,480 tokens: no request ends inside a cell (that is minutes of decoding; a cell's
 *   window closes a few seconds after its first token), so every worker decodes all window long,
 *   the batch is C and the window holds no prefill: the figures depend on C through the step
 *   model, not on restart timing (which the virtual client, with no network, would not
 *   reproduce). It also makes the KV cache bind at 8K: 51 × (8,192 + 20,480) > 1,441,792, so
 *   8K/51 and above are Over capacity; at 2K, 64 × 22,528 fits exactly; context 0 runs
 *   64 × 20,480 (it must fit too: context 0 cells within max running requests always run, and
 *   requests the sim cannot hold would queue);
 * - columns [1, 4, 16, 64]: every truth below falls strictly between two columns (8 of the 9
 *   between 16 and 64, one between 4 and 16), so each search bisects a gap of 48 or 12.
 *
 * The SLOs, and why timing noise does not flip them. One more user changes TBT by ≈ 0.45 %
 * (0.093–0.12 ms of 17–24 ms) and, at 8K only, TTFT p90 by ≈ 20 ms (the serial frontend's 21 ms
 * per 8K prompt). The speed bounds sit 30–50 % of that step away from the figures of the
 * concurrencies on either side of each boundary (checked on the virtual sweep), against which the
 * real run adds: TBT error from the sim's step lateness at the window's two ends, shared by every
 * stream of the cell (typically ≈ 0.1 %); and, rarely, a whole step the sim's thread lost to the
 * loaded machine (≈ 1.3 %: such cells are detected from the sim's own records and measured again,
 * see disturbance()). The real TTFT at 8K is 0–17 ms above the virtual one (C request bodies of
 * 40 KB each are written at once, so the first one is complete at the sim a little later; the
 * virtual client has no network): the 8K TTFT bound sits 12 ms above the truth's figure at its
 * capacity, 8 ms below the next, and at a truth of 23 the tolerance of ±1 user absorbs a larger
 * offset. TTFT binds only at 8K: at 0 and 2K it grows by 1–8 ms per user and the real client's
 * send spread and HTTP overheads move it by tens of ms, so the bound is far above it there.
 *
 *   SLO                               0                 2K                 8K
 *   tbtP99<=18.52                     19 (TBT p99)      18 (TBT p99)       15 (TBT p99)
 *   perRequest>=50.44,ttftP90<=562    33 (per-request)  31 (per-request)   23 (TTFT p90)
 *   perRequest>=44.2                  63 (per-request)  59 (per-request)   50 (KV capacity)
 *
 * The search itself stops at a gap of max(1, ⌈5 % of lo⌉), so it may end up to that − 1 below the
 * truth with no noise at all (e.g. 61 for 63): within the 5 % tolerance by construction. Cells are
 * measured once per (context, C) and shared by the three SLOs' searches (as one run's columns are);
 * the confirmation cell is measured again, as the product does (shared when two SLOs confirm the
 * same concurrency).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { overCapacityResult } from '../../src/matrix/cell-test.js';
import { planCell } from '../../src/matrix/plan.js';
import { contextLabel } from '../../src/shapes/labels.js';
import type { CapacityRow, CellResult, Slo } from '../../src/shapes/result.js';
import type { SimHandle } from '../../src/sim/index.js';
import { resolveSimProfile } from '../../src/sim/profiles.js';
import { bracket, maxSearchCells, searchCapacity, type Judged } from '../../src/slo/capacity.js';
import { capacityRow } from '../../src/judge/capacity-row.js';
import { bindingText } from '../../src/text/capacity-line.js';
import { parseSloText } from '../../src/slo/slo.js';
import { sloVerdict } from '../../src/judge/slo-verdict.js';
import { trueCapacity, VirtualRow, type TrueCapacity } from './capacity-truth.js';
import {
  accuracyStatuses,
  compareWithTruth,
  openAccuracyRun,
  runAccuracyCell,
  startThreadSim,
  truthAsTimeline,
  type AccuracyCell,
  type OpenedAccuracyRun,
} from './harness.js';

const PROFILE = 'sglang-h200';
const OVERRIDES = { eosProbability: 0 } as const;
const CONTEXTS = [0, 2048, 8192] as const;
const COLUMNS = [1, 4, 16, 64] as const;
const MAX_OUTPUT = 20_480;
/** long enough that one late sim step at either end moves TBT by well under a user's step (see above) */
const WINDOW_MS = 1500;
const SLOS: Slo[] = ['tbtP99<=18.52', 'perRequest>=50.44,ttftP90<=562', 'perRequest>=44.2'].map((t) => parseSloText(t));
/**
 * Measurements per cell before the least disturbed one is kept (see disturbance): a loaded 2-core
 * machine now and then delays the sim's thread by a whole step, or the client's; measured again,
 * the cell is clean (one run on a loaded machine saw three disturbed attempts of a cell in a row).
 */
const ATTEMPTS = 5;

let sim: SimHandle;
let run: OpenedAccuracyRun;
/** truth by SLO text and context, computed before any cell is measured */
const truths = new Map<string, TrueCapacity>();
/** the profile's own rows in virtual time, by context: what the sim should do at each concurrency */
const modelRows = new Map<number, VirtualRow>();

interface Outcome {
  slo: Slo;
  context: number;
  truth: TrueCapacity;
  row: CapacityRow;
  initial: { lo: number; hi?: number };
  probes: number[];
  added: number;
}
const outcomes: Outcome[] = [];

const key = (slo: Slo, context: number): string => `${slo.text} @ ${context}`;

beforeAll(async () => {
  // the truth first, from the profile alone (no sim, no measured cell)
  const profile = resolveSimProfile(PROFILE, OVERRIDES);
  for (const context of CONTEXTS) {
    const row = new VirtualRow({ profile, context, maxOutputTokens: MAX_OUTPUT, windowMs: WINDOW_MS });
    modelRows.set(context, row);
    for (const slo of SLOS) truths.set(key(slo, context), trueCapacity(row, slo, COLUMNS[COLUMNS.length - 1]!));
  }
  sim = await startThreadSim({ profile: PROFILE, overrides: OVERRIDES });
  run = await openAccuracyRun(sim, {
    target: { engine: 'sglang' },
    matrix: { contexts: [...CONTEXTS], concurrency: [...COLUMNS], maxOutputTokens: MAX_OUTPUT },
  });
}, 60_000);

afterAll(async () => {
  await run?.opened.close();
  await sim?.close();
  if (outcomes.length === 0) return;
  const lines = [
    `[capacity-slo] ${PROFILE}, max output ${MAX_OUTPUT}, window ${WINDOW_MS} ms, columns ${COLUMNS.join(', ')}`,
    '| SLO | context | truth | binds at truth + 1 | measured | binds (search) | Δ | tolerance | columns bracket | probes | cells added (max) | confirmation |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const o of outcomes) {
    const t = o.truth;
    const r = o.row;
    lines.push(
      `| ${o.slo.text} | ${contextLabel(o.context)} | ${t.atLeast ? '≥ ' : ''}${t.capacity} | ${t.binding ? bindingText(t.binding, t.firstFailure) : '—'} | ` +
        `${r.atLeast ? '≥ ' : ''}${r.capacity} | ${r.binding ? bindingText(r.binding, r.bindingConcurrency) : '—'} | ${r.capacity - t.capacity} | ` +
        `${tolerance(t.capacity).toFixed(2)} | ${o.initial.lo}–${o.initial.hi ?? '…'} | ${o.probes.join(', ') || '—'} | ` +
        `${o.added} (${o.initial.hi !== undefined ? maxSearchCells(o.initial.lo, o.initial.hi) : 0}) | ${r.confirmation ? `${r.confirmation.concurrency} ${r.confirmation.meets ? 'meets' : 'misses'}` : '—'} |`,
    );
  }
  console.log(lines.join('\n'));
});

/**
 * How the sim kept its own schedule in the cell's window, from its write records (not from the
 * model): its median per-request TBT, and its longest gap between two writes of one request over
 * that median (about 1 when every step ran on time; 2 when one step was a whole step late).
 */
function simTiming(cell: AccuracyCell): { tbtMs?: number; maxGapRatio?: number } {
  const { windowStartMs: ws, windowEndMs: we } = cell.raw;
  let maxGap = 0;
  for (const t of cell.raw.timelines) {
    const rec = cell.truth.get(t.id);
    if (!rec) continue;
    const at = truthAsTimeline(rec, t.sendMs).chunkMs.filter((x) => x >= ws && x <= we);
    for (let i = 1; i < at.length; i++) maxGap = Math.max(maxGap, at[i]! - at[i - 1]!);
  }
  const tbtMs = compareWithTruth(cell).truth.tbtMedianMs;
  return { ...(tbtMs !== undefined ? { tbtMs, maxGapRatio: maxGap / tbtMs } : {}) };
}

/**
 * How far a cell is from showing what the server did, from the cell's own records and the sim's
 * own model, never from the truth capacity: 0 when clean. Three ways a loaded machine disturbs a
 * cell:
 * - the sim's step timer falls a whole step behind (its schedule restarts from then, so the window
 *   lost that time: one 20 ms step in a 1.5 s window moves TBT by 1.3 %, three users' worth; a gap
 *   of ≥ 1.9 × the median between two of a request's writes shows it; a late step that does not
 *   lose its slot is made up by the next and leaves < 2 ×);
 * - the sim ran slower than its own profile says, without one such gap: its TBT median over the
 *   window is more than 0.15 % over the model's at that concurrency (the profile's step arithmetic
 *   in virtual time, `modelTbtMs`). A clean cell is within 0.1 % of it (the table of 2026-12-07:
 *   16.806 against 16.818 ms at 8K/1, 20.582 against 20.587 at 8K/33); a CI run failed on 8K/48
 *   whose sim wrote at 22.71 ms against the model's 22.354 (1.6 % slow, its longest gap 1.85 ×),
 *   where the SLO's bound sat 0.15 % of a TBT away from the figures next to it;
 * - the client's TBT median is more than 0.2 % off the sim's own (the client thread stalled at a
 *   window end).
 * The score is the relative TBT error each implies, so the least disturbed of several attempts can
 * be kept.
 */
function disturbance(
  clientTbtMs: number | undefined,
  simT: { tbtMs?: number; maxGapRatio?: number },
  modelTbtMs: number | undefined,
): { score: number; why?: string } {
  if (simT.tbtMs === undefined || clientTbtMs === undefined) return { score: Infinity, why: 'no TBT' };
  const lost = simT.maxGapRatio! >= 1.9 ? ((simT.maxGapRatio! - 1) * simT.tbtMs) / WINDOW_MS : 0;
  const slow = modelTbtMs !== undefined && simT.tbtMs > modelTbtMs * 1.0015 ? simT.tbtMs / modelTbtMs - 1 : 0;
  const off = Math.abs(clientTbtMs - simT.tbtMs) / simT.tbtMs;
  const why: string[] = [];
  if (lost > 0) why.push(`the sim fell behind (a gap of ${simT.maxGapRatio!.toFixed(2)} × its median)`);
  if (slow > 0) why.push(`the sim wrote at ${simT.tbtMs.toFixed(3)} ms a token, ${(100 * slow).toFixed(2)} % slower than its profile's ${modelTbtMs!.toFixed(3)} ms`);
  if (off > 0.002) why.push(`client TBT ${clientTbtMs.toFixed(3)} ms vs the sim's ${simT.tbtMs.toFixed(3)} ms`);
  return why.length > 0 ? { score: lost + slow + off, why: why.join('; ') } : { score: 0 };
}

/** The done-when tolerance: ±1 user or ±5 % of the truth, whichever is larger. */
function tolerance(truth: number): number {
  return Math.max(1, 0.05 * truth);
}

/**
 * CI measures the 8K row, where the three SLOs bind by TBT, TTFT and KV capacity (about 40 s);
 * LLM_BENCH_ACCURACY=full measures all three contexts (about 2 minutes; the last full table is in
 * docs/capacity.md). A context left out says so in the test's name and in the log.
 */
const FULL = process.env.LLM_BENCH_ACCURACY === 'full';
const MEASURED: readonly number[] = FULL ? CONTEXTS : [8192];
const SKIP_REASON = 'set LLM_BENCH_ACCURACY=full to measure it too (CI measures 8K, where TBT, TTFT and KV capacity each bind)';

describe.each(CONTEXTS)('capacity at 3 SLOs, context %i, against the sim truth', (context) => {
  const measured = MEASURED.includes(context);
  if (!measured) console.log(`[capacity-slo] context ${contextLabel(context)} skipped: ${SKIP_REASON}`);
  (measured ? test : test.skip)(
    `the search finds each truth within ±1 user or ±5 %, with at most ⌈log2(gap)⌉ + 1 added cells${measured ? '' : ` (skipped: ${SKIP_REASON})`}`,
    async () => {
      const { session } = run.opened;
      const facts = { kvCapacityTokens: session.facts.kvCapacityTokens?.value, maxRunningRequests: session.facts.maxRunningRequests?.value };
      // the probe read the sim's KV capacity (the Over capacity rule of the search depends on it)
      expect(facts.kvCapacityTokens).toBe(sim.profile.kvCapacityTokens);

      const measured = new Map<number, CellResult>();
      const confirmed = new Map<number, CellResult>();
      /**
       * One cell as the search would have it: Over capacity from the plan (not run), else measured
       * against the sim. A cell the machine disturbed (see disturbance) is measured again, up to
       * ATTEMPTS times in all; the least disturbed is kept.
       */
      const measure = async (concurrency: number, why: string): Promise<CellResult> => {
        const planned = planCell(context, concurrency, MAX_OUTPUT, facts);
        if (planned.overCapacity) return overCapacityResult(planned);
        let best: { cell: AccuracyCell; score: number } | undefined;
        for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
          // attempts: 1: this loop is the retake (a stalled client shows in disturbance, as the client's TBT off the sim's)
          const cell = await runAccuracyCell(run, sim, { context, concurrency, windowMs: WINDOW_MS, attempts: 1 });
          const { statuses } = accuracyStatuses(cell, concurrency);
          const f = cell.figures;
          const simT = simTiming(cell);
          const modelTbtMs = modelRows.get(context)!.at(concurrency).figures?.timeBetweenTokensMs?.median;
          const disturbed = disturbance(f.timeBetweenTokensMs?.median, simT, modelTbtMs);
          console.log(
            `[capacity-slo] ${planned.key} (${why}${attempt > 1 ? `, attempt ${attempt}` : ''}): per-request ${f.perRequestTokensPerSecond?.toFixed(3)} tok/s, ` +
              `TBT p99 ${f.timeBetweenTokensMs?.p99.toFixed(3)} ms, TTFT p90 ${f.ttftMs?.p90.toFixed(1)} ms; ${statuses.join(', ')}; ` +
              `loop delay p99 ${cell.raw.loopDelayMs?.p99.toFixed(1)} ms; sim TBT median ${simT.tbtMs?.toFixed(3)} ms, longest sim gap ${simT.maxGapRatio?.toFixed(2)} × it; the profile's TBT ${modelTbtMs?.toFixed(3)} ms` +
              (disturbed.why ? `; DISTURBED: ${disturbed.why}` : ''),
          );
          // the statuses are logged, not judged: a machine hiccup that marks the cell Client-limited
          // would make the search treat it as a miss, and this test is about the search's arithmetic
          expect(cell.raw.gate.timedOut).toBe(false);
          expect(f.failedRequests).toBe(0);
          expect(f.timeBetweenTokensMs?.samples).toBe(concurrency);
          if (!best || disturbed.score < best.score) best = { cell, score: disturbed.score };
          if (disturbed.score === 0) break;
        }
        const f = best!.cell.figures;
        return { context, contextLabel: planned.contextLabel, concurrency, status: 'valid', statuses: ['valid'], evidence: {}, figures: f, finishedAt: new Date().toISOString() };
      };
      const cellAt = async (concurrency: number, why: string): Promise<CellResult> => {
        let c = measured.get(concurrency);
        if (!c) measured.set(concurrency, (c = await measure(concurrency, why)));
        return c;
      };

      for (const c of COLUMNS) await cellAt(c, 'column');
      for (const slo of SLOS) {
        const truth = truths.get(key(slo, context))!;
        const judged: Judged[] = [];
        for (const c of COLUMNS) judged.push({ concurrency: c, verdict: sloVerdict(measured.get(c)!, slo), adaptive: false });
        const initial = bracket(judged);
        // the product's search (src/slo/capacity.ts), over cells measured here
        const probes: number[] = [];
        const search = await searchCapacity({
          columns: judged,
          overCapacity: (c) => planCell(context, c, MAX_OUTPUT, facts).overCapacity !== undefined,
          probe: async (c, why) => {
            let cell: CellResult;
            if (why === 'confirmation') {
              const kept = confirmed.get(c);
              cell = kept ?? (await measure(c, `confirmation ${slo.text}`));
              confirmed.set(c, cell);
            } else {
              cell = await cellAt(c, `search ${slo.text}`);
              probes.push(c);
            }
            return { concurrency: c, verdict: sloVerdict(cell, slo), adaptive: true, ...(cell.status === 'over-capacity' ? { measured: false } : {}) };
          },
        });
        const confirmation = search.confirmation ? { concurrency: search.confirmation.concurrency, verdict: search.confirmation.verdict } : undefined;
        const row = capacityRow({ context, contextLabel: contextLabel(context), judged: search.judged, ...(confirmation ? { confirmation } : {}) });
        // cells the search measured (an Over capacity one is decided by the plan: not run, no cost)
        const added = search.judged.filter((j) => j.adaptive && j.measured !== false).length + (confirmation ? 1 : 0);
        outcomes.push({ slo, context, truth, row, initial: { lo: initial.lo, ...(initial.hi !== undefined ? { hi: initial.hi } : {}) }, probes, added });

        const what = `${slo.text} at ${contextLabel(context)}`;
        // the truth lies strictly between two columns (else this combination would not test the bisection)
        expect.soft(truth.atLeast, `${what}: truth ${truth.capacity} is not below the largest column`).toBe(false);
        expect.soft(COLUMNS as readonly number[], `${what}: truth ${truth.capacity} is a column`).not.toContain(truth.capacity);
        // within ±1 user or ±5 % of the truth
        expect.soft(Math.abs(row.capacity - truth.capacity), `${what}: measured ${row.capacity} vs truth ${truth.capacity}`).toBeLessThanOrEqual(tolerance(truth.capacity));
        expect.soft(row.atLeast, `${what}: atLeast`).toBe(truth.atLeast);
        // at most ⌈log2(gap)⌉ + 1 cells for the bracket the columns gave
        if (initial.hi !== undefined) {
          expect.soft(row.adaptiveCells, `${what}: cells added`).toBe(added);
          expect.soft(added, `${what}: cells added for the bracket ${initial.lo}–${initial.hi}`).toBeLessThanOrEqual(maxSearchCells(initial.lo, initial.hi));
        } else {
          expect.soft(added, `${what}: no cells beyond the columns`).toBe(0);
        }
      }
    },
    240_000,
  );
});
