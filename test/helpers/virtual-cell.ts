/**
 * One sustained-decode cell of the simulated engine (src/sim/engine-model.ts) in VIRTUAL time: the
 * sequence of a real cell (src/load/cell.ts, METHOD.md run sequence 5) with no network, no client
 * and no timers.
 * A scout request caches the shared prefix; C closed-loop workers each send their next request the
 * moment the previous one ends; a readiness gate waits until every worker's first request has a
 * token; a settle time; a fixed window; everything in flight at the window's end is aborted. The
 * engine's own step arithmetic decides when each token is written, so the result is exact and
 * deterministic: what the profile implies, with none of the real run's timing noise.
 *
 * Used by perf/sim-fit.ts (the fit of the reference profiles) and by the accuracy tests as ground
 * truth (test/accuracy/capacity-truth.ts: capacity at an SLO). It knows nothing of measured cells.
 * It lives with the tests, not in src/sim/, because it computes figures (src/metrics): measuring
 * side, which the simulator never imports.
 *
 * Prompts are words of one token each ("w0ab "): a request's prompt is `context` tokens, of which
 * the last `tailTokens` are unique to the request and the rest is the shared prefix the scout
 * caches (a context of at most `tailTokens` is all tail, at least 1 token).
 */

import type { RequestTimeline } from '../../src/shapes/timeline.js';
import type { MetricsSample } from '../../src/shapes/engine.js';
import { computeCellFigures, type CellFiguresInput } from '../../src/metrics/figures.js';
import type { CellFigures } from '../../src/shapes/result.js';
import { EngineRequest, SimEngine, type FinishReason, type SimSink } from '../../src/sim/engine-model.js';
import { hashPromptBlocks } from '../../src/sim/kv-cache.js';
import type { SimProfile } from '../../src/sim/profiles.js';

/** One SimEngine driven by a virtual clock: each step advances `now` by its duration. */
export class VirtualEngine {
  now = 0;
  readonly engine: SimEngine;
  constructor(readonly profile: SimProfile) {
    this.engine = new SimEngine(profile);
  }

  /** Submits a request now; `onToken(t, n)` per emission of n tokens at virtual time t, `onEnd` when it finished. */
  submit(prompt: string, maxTokens: number, onToken: (t: number, n: number) => void, onEnd: () => void): EngineRequest {
    const now = (): number => this.now;
    const sink: SimSink = {
      onAdmit() {},
      onTokens(n: number, finish: FinishReason | undefined) {
        onToken(now(), n);
        if (finish) onEnd();
      },
    };
    const blocks = hashPromptBlocks(prompt, this.profile.blockSize, this.profile.prefixCaching);
    const req = new EngineRequest(blocks, maxTokens, Infinity, sink);
    this.engine.submit(req, this.now);
    return req;
  }

  /** Advances virtual time step by step until `until`, until `stop()` holds, or until the engine is idle. */
  runUntil(until: number, stop?: () => boolean): void {
    while (this.now < until && !stop?.()) {
      const plan = this.engine.runStep(this.now);
      if (plan.kind === 'step') this.now += plan.durationMs;
      else if (plan.kind === 'wait') this.now = Math.max(this.now + 0.001, plan.untilMs);
      else return;
    }
  }
}

/** n tokens of text made of 1-token words ("w0ab "), distinct per `salt`. */
export function textTokens(n: number, salt: string): string {
  const parts: string[] = new Array(n);
  for (let i = 0; i < n; i++) parts[i] = `${salt}${(i % 1296).toString(36)} `.slice(-5);
  return parts.join('');
}

export interface VirtualCellOptions {
  /** prompt tokens of every request */
  context: number;
  concurrency: number;
  /** output cap of every worker request (the run's max output; the sim ignores EOS only with eosProbability 0 or ignore_eos, so every request runs to it here) */
  maxOutputTokens: number;
  windowMs: number;
  /** from the gate (every worker's first request has a token) to the window's start; default 1000 */
  settleMs?: number;
  /** tokens at the end of each prompt unique to the request; default 32 */
  tailTokens?: number;
  /** the gate gives up after this long (and the window opens anyway); default 600,000 */
  gateTimeoutMs?: number;
  /** how often the running count is sampled in the window (the metrics scrape); default 1000 */
  sampleEveryMs?: number;
}

/** A worker request as the engine wrote it (times in virtual ms). */
export interface VirtualRequest {
  worker: number;
  sendMs: number;
  firstMs?: number;
  /** emissions: when and how many tokens */
  chunkMs: number[];
  chunkTokens: number[];
  /** when its last token was written (it reached the max output) */
  endMs?: number;
  promptTokens: number;
}

export interface VirtualCell {
  context: number;
  concurrency: number;
  /** every worker request, in send order (the scout excluded) */
  requests: VirtualRequest[];
  windowStartMs: number;
  windowEndMs: number;
  gateTimedOut: boolean;
  /** running and waiting counts sampled in the window */
  samples: MetricsSample[];
}

/** Runs one cell of `profile` in virtual time; see the file comment for the sequence. */
export function runVirtualCell(profile: SimProfile, o: VirtualCellOptions): VirtualCell {
  const { context, concurrency: c, maxOutputTokens: maxOut } = o;
  const tail = o.tailTokens ?? 32;
  const settleMs = o.settleMs ?? 1000;
  const sampleEveryMs = o.sampleEveryMs ?? 1000;
  const h = new VirtualEngine(profile);
  const shared = context > tail ? textTokens(context - tail, 's') : '';
  const tailTokens = context > tail ? tail : Math.max(1, context);
  // scout: one max_tokens = 1 request that caches the shared prefix
  let scoutDone = false;
  h.submit(shared + textTokens(tailTokens, 'z'), 1, () => {}, () => (scoutDone = true));
  h.runUntil(1e9, () => scoutDone);

  const requests: VirtualRequest[] = [];
  let reqNo = 0;
  let windowEndMs = Infinity;
  const send = (worker: number): void => {
    const rec: VirtualRequest = { worker, sendMs: h.now, chunkMs: [], chunkTokens: [], promptTokens: 0 };
    requests.push(rec);
    // a tail of its own per request (unique among 1,296 consecutive requests)
    const salt = `u${(reqNo++ % 1296).toString(36)}`.slice(0, 3);
    const req = h.submit(
      shared + textTokens(tailTokens, salt),
      maxOut,
      (t, n) => {
        rec.firstMs ??= t;
        rec.chunkMs.push(t);
        rec.chunkTokens.push(n);
      },
      () => {
        rec.endMs = h.now;
        // closed loop: the worker's next request goes out at once; none after the window
        if (h.now < windowEndMs) send(worker);
      },
    );
    rec.promptTokens = req.prompt.tokens;
  };
  for (let w = 0; w < c; w++) send(w);

  // readiness gate: every worker's first request has a token
  const gateUntil = h.now + (o.gateTimeoutMs ?? 600_000);
  const firstRound = requests.slice(0, c);
  const ready = (): boolean => firstRound.every((r) => r.firstMs !== undefined);
  h.runUntil(gateUntil, ready);
  const gateTimedOut = !ready();
  h.runUntil(h.now + settleMs);

  const windowStartMs = h.now;
  windowEndMs = windowStartMs + o.windowMs;
  const samples: MetricsSample[] = [];
  while (h.now < windowEndMs) {
    h.runUntil(Math.min(windowEndMs, h.now + sampleEveryMs));
    samples.push({ atMs: Math.min(h.now, windowEndMs), running: h.engine.running.length, waiting: h.engine.waitingCount });
  }
  return { context, concurrency: c, requests, windowStartMs, windowEndMs, gateTimedOut, samples };
}

/**
 * The cell's worker requests as client timelines: chunks at the engine's write times, TTFT from
 * the send (the virtual client has no queueing of its own, so send = headers written), requests in
 * flight at the window's end aborted there, as the cell runner does.
 */
export function virtualTimelines(cell: VirtualCell): RequestTimeline[] {
  return cell.requests.map((r, i) => {
    const t: RequestTimeline = {
      id: `virtual-c${cell.context}x${cell.concurrency}-w${r.worker}-r${i}`,
      sendMs: r.sendMs,
      sentHeadersMs: r.sendMs,
      chunkMs: r.chunkMs.filter((at) => at <= cell.windowEndMs),
      chunkTokens: r.chunkTokens.filter((_, k) => r.chunkMs[k]! <= cell.windowEndMs),
      tokenSource: 'usage',
      reasoningTokens: 0,
      promptTokens: r.promptTokens,
      end: r.endMs !== undefined && r.endMs <= cell.windowEndMs ? { kind: 'done', atMs: r.endMs } : { kind: 'aborted', atMs: cell.windowEndMs },
    };
    if (r.firstMs !== undefined && r.firstMs <= cell.windowEndMs) t.firstTokenMs = r.firstMs;
    return t;
  });
}

/** The cell's figures by the product's own definitions (computeCellFigures), TTFT from the headers as the matrix does. */
export function virtualCellFigures(cell: VirtualCell, options: Pick<CellFiguresInput, 'stallLimit'> = {}): CellFigures {
  return computeCellFigures({
    timelines: virtualTimelines(cell),
    windowStartMs: cell.windowStartMs,
    windowEndMs: cell.windowEndMs,
    metricsSamples: cell.samples,
    ttftFrom: 'sent-headers',
    ...options,
  });
}
