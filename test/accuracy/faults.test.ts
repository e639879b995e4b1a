/**
 * Done-when 4 (errors part) and 6: failures are counted exactly where the sim's fault settings put
 * them, and a stream killed mid-cell restarts its worker.
 *
 * The sim draws each request's faults from a PRNG seeded by (profile seed, X-Request-Id)
 * (src/sim/faults.ts), so for every request the client sent we can recompute what the sim decided
 * (an HTTP 500 leaves no truth record) and check it against the sim's truth records (a mid-stream
 * error or close ends the record with end = 'error').
 */
import { afterAll, describe, expect, test } from 'vitest';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { drawFaults, requestSeed } from '../../src/sim/faults.js';
import { mulberry32 } from '../../src/random.js';
import type { SimHandle } from '../../src/sim/index.js';
import { accuracyStatuses, openAccuracyRun, parseWorkerId, runAccuracyCell, startThreadSim, type AccuracyCell, type OpenedAccuracyRun } from './harness.js';

const STEP_MS = 10;
const FAULT_AFTER_TOKENS = 5;

const opened: { sim: SimHandle; run: OpenedAccuracyRun }[] = [];
afterAll(async () => {
  for (const o of opened) {
    await o.run.opened.close();
    await o.sim.close();
  }
});

async function open(faults: Record<string, number>, maxOutputTokens: number): Promise<{ sim: SimHandle; run: OpenedAccuracyRun }> {
  const sim = await startThreadSim({
    overrides: { stepBaseMs: STEP_MS, maxRunningRequests: 64, kvCapacityTokens: 1 << 20, eosProbability: 0, faults: { faultAfterTokens: FAULT_AFTER_TOKENS, ...faults } },
  });
  // a fault profile may fail the warm-up request too: retry with a new run id (new fault draw)
  const run = await openAccuracyRun(sim, { matrix: { contexts: [0], concurrency: [1], maxOutputTokens } }, 20);
  const o = { sim, run };
  opened.push(o);
  return o;
}

/** what the sim decided for a request id (same PRNG, same order as src/sim/server.ts) */
function simPlan(sim: SimHandle, id: string) {
  return drawFaults(sim.profile.faults, mulberry32(requestSeed(sim.profile.seed, id)));
}


const failedInCell = (cell: AccuracyCell): RequestTimeline[] =>
  cell.raw.timelines.filter((t) => t.end?.kind === 'error' && t.end.atMs <= cell.raw.windowEndMs);

describe('Errors appear exactly where the sim put them', () => {
  test('HTTP 500 and mid-stream error events: failed count = the sim’s failed requests of the cell', async () => {
    // 20 tokens (200 ms) per request, so each of the 4 workers sends many requests inside the cell
    const { sim, run } = await open({ http500Rate: 0.2, errorRate: 0.2 }, 20);
    const C = 4;
    const cell = await runAccuracyCell(run, sim, { context: 0, concurrency: C, windowMs: 1500 });
    const we = cell.raw.windowEndMs;

    let sim500 = 0;
    let simMidStream = 0;
    for (const t of cell.raw.timelines) {
      const plan = simPlan(sim, t.id);
      const rec = cell.truth.get(t.id);
      if (plan.status === 500) {
        sim500++;
        // the sim answered 500 before creating a truth record; the client failed it with that status
        expect(rec, t.id).toBeUndefined();
        if (t.end?.kind !== 'aborted') expect(t.end).toMatchObject({ kind: 'error', code: 'http-status', httpStatus: 500 });
      } else if (plan.errorAfter !== undefined) {
        // the stream carried exactly faultAfterTokens tokens, then the error event (unless the
        // client closed it at the window's end first)
        if (t.end?.kind === 'error') {
          expect(rec?.end, t.id).toBe('error');
          simMidStream++;
          expect(t.end.code).toBe('error-event');
          expect(rec!.completionTokens).toBe(FAULT_AFTER_TOKENS);
          expect(Array.from(t.chunkTokens).reduce((a, b) => a + b, 0)).toBe(FAULT_AFTER_TOKENS);
        }
      } else {
        expect(t.end?.kind, t.id).not.toBe('error');
        expect(rec?.end).not.toBe('error');
      }
    }
    // every truth record that ended in error is a failed request of the client
    const truthErrors = [...cell.truth.values()].filter((r) => r.end === 'error').map((r) => r.id);
    const clientErrorIds = new Set(cell.raw.timelines.filter((t) => t.end?.kind === 'error').map((t) => t.id));
    for (const id of truthErrors) {
      const t = cell.raw.timelines.find((x) => x.id === id);
      // a failure the sim wrote in the last moment of the window may have been aborted by the client first
      if (t?.end?.kind !== 'aborted') expect(clientErrorIds.has(id), id).toBe(true);
    }

    const failed = failedInCell(cell);
    expect(failed.length).toBeGreaterThan(0);
    expect(sim500).toBeGreaterThan(0);
    expect(simMidStream).toBeGreaterThan(0);
    // figures count exactly the client's failures up to the window's end …
    expect(cell.figures.failedRequests).toBe(failed.length);
    // … which are the sim's failures whose failure reached the client by then
    const simFailedReached = cell.raw.timelines.filter((t) => {
      const plan = simPlan(sim, t.id);
      const failedBySim = plan.status === 500 || cell.truth.get(t.id)?.end === 'error';
      return failedBySim && t.end?.kind === 'error' && t.end.atMs <= we;
    });
    expect(cell.figures.failedRequests).toBe(simFailedReached.length);

    const verdict = accuracyStatuses(cell, C);
    expect(verdict.status).toBe('errors');
    // the sim never queued a request of this cell (64 may run at once): no waiting in any sample,
    // and every request that was not refused was admitted at the next step boundary
    expect(cell.figures.maxWaitingRequests).toBe(0);
    for (const r of cell.truth.values()) if (r.admittedMs !== undefined) expect(r.admittedMs - r.receivedMs).toBeLessThan(3 * STEP_MS + 20);
    // NOTE (reported): `statuses` also holds 'requests-queued' here, from the rule "mean running <
    // 0.95 × C": workers backing off after failures do not offer C requests, so the sim runs fewer.
    expect(verdict.evidence.errors?.count).toBe(cell.figures.failedRequests);
    expect(verdict.evidence.errors?.byCode['http-status'] ?? 0).toBeGreaterThan(0);
    expect(verdict.evidence.errors?.byCode['error-event'] ?? 0).toBeGreaterThan(0);
  }, 30_000);

  test('a cell without faults has no failed requests and no Errors status (control)', async () => {
    // long outputs: no request ends inside the cell (closed-loop restarts can dip the sim's running
    // count for one step, which the running-share rule may read as queueing; reported)
    const { sim, run } = await open({}, 1000);
    const cell = await runAccuracyCell(run, sim, { context: 0, concurrency: 4, windowMs: 800 });
    expect(cell.figures.failedRequests).toBe(0);
    expect([...cell.truth.values()].filter((r) => r.end === 'error')).toEqual([]);
    expect(accuracyStatuses(cell, 4).statuses).toEqual(['valid']);
  }, 30_000);
});

describe('A stream killed mid-cell restarts its worker and is counted as failed', () => {
  test('closed without [DONE] after 5 tokens: no-done failure, then the same worker sends its next request', async () => {
    // half of the requests are closed by the sim after 5 tokens (50 ms); the rest run 300 ms
    const { sim, run } = await open({ closeRate: 0.5 }, 30);
    const C = 4;
    const cell = await runAccuracyCell(run, sim, { context: 0, concurrency: C, windowMs: 1500 });
    const { timelines, windowStartMs: ws, windowEndMs: we } = cell.raw;
    const byWorker = new Map<number, RequestTimeline[]>();
    for (const t of timelines) {
      const w = parseWorkerId(t.id)!;
      expect(w).toBeDefined();
      const list = byWorker.get(w.worker) ?? [];
      list[w.seq] = t;
      byWorker.set(w.worker, list);
    }
    expect([...byWorker.keys()].sort()).toEqual([0, 1, 2, 3]);

    let killedInWindow = 0;
    for (const [w, list] of byWorker) {
      let consecutiveFailures = 0;
      for (let seq = 0; seq < list.length; seq++) {
        const t = list[seq]!;
        expect(t, `worker ${w} request ${seq}`).toBeDefined();
        const rec = cell.truth.get(t.id);
        const plan = simPlan(sim, t.id);
        if (plan.closeAfter === undefined || t.end?.kind === 'aborted') {
          consecutiveFailures = 0;
          continue;
        }
        consecutiveFailures++;
        // the sim closed it after exactly 5 tokens and recorded an error end
        expect(rec?.end).toBe('error');
        expect(rec?.completionTokens).toBe(FAULT_AFTER_TOKENS);
        // the client: stream closed without its end marker ⇒ failed, with all 5 tokens counted
        expect(t.end).toMatchObject({ kind: 'error', code: 'no-done' });
        expect(Array.from(t.chunkTokens).reduce((a, b) => a + b, 0)).toBe(FAULT_AFTER_TOKENS);
        const failedAt = t.end!.atMs;
        if (failedAt >= ws && failedAt <= we) killedInWindow++;
        // the worker restarted: its next request was sent after the failure and the runner's
        // backoff (50 ms doubling per consecutive failure, at most 1 s), unless the window had
        // closed by then
        const backoffMs = Math.min(1000, 50 * 2 ** Math.min(consecutiveFailures - 1, 5));
        const next = list[seq + 1];
        if (failedAt + backoffMs < we - 50) {
          expect(next, `worker ${w} restarted after request ${seq}`).toBeDefined();
          expect(next!.sendMs - failedAt).toBeGreaterThanOrEqual(backoffMs - 5); // timer slack
        }
        if (next) expect(next.sendMs).toBeGreaterThanOrEqual(failedAt);
      }
    }
    expect(killedInWindow).toBeGreaterThan(0);
    const failed = failedInCell(cell);
    expect(cell.figures.failedRequests).toBe(failed.length);
    expect(failed.every((t) => t.end?.kind === 'error' && t.end.code === 'no-done')).toBe(true);
    expect(cell.figures.failedRequests).toBe(
      timelines.filter((t) => cell.truth.get(t.id)?.end === 'error' && t.end?.kind === 'error' && t.end.atMs <= we).length,
    );
    // output tokens still match the truth (killed streams' tokens included)
    expect(accuracyStatuses(cell, C).statuses).toContain('errors');
  }, 30_000);
});

describe('A server that closes connections before answering', () => {
  test('an Errors cell naming the cause; each request is sent at most twice, never a retry loop', async () => {
    // half of the requests (by id) are closed before a byte of the answer; a resend draws the same
    const { sim, run } = await open({ closeBeforeRate: 0.5 }, 20);
    const C = 4;
    const cell = await runAccuracyCell(run, sim, { context: 0, concurrency: C, windowMs: 1200 });
    const closed = cell.raw.timelines.filter((t) => simPlan(sim, t.id).closeBefore === true && t.end?.kind !== 'aborted');
    expect(closed.length).toBeGreaterThan(0);
    for (const t of closed) {
      expect(t.end).toMatchObject({ kind: 'error', code: 'closed-before-response' });
      expect(t.end?.kind === 'error' && t.end.message).toMatch(/the server closed the connection before answering/);
      // never more than one resend
      expect(t.connectionRetries ?? 0).toBeLessThanOrEqual(1);
    }
    // the others streamed normally
    const open_ = cell.raw.timelines.filter((t) => simPlan(sim, t.id).closeBefore !== true && t.end?.kind === 'error');
    expect(open_).toEqual([]);
    const verdict = accuracyStatuses(cell, C);
    expect(verdict.statuses).toContain('errors');
    expect(Object.keys(verdict.evidence.errors!.byCode)).toEqual(['closed-before-response']);
    expect(verdict.evidence.errors!.firstMessage).toMatch(/the server closed the connection before answering/);
  }, 30_000);
});
