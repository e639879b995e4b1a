/**
 * The simulated continuous-batching engine: pure state and arithmetic, no timers and no I/O.
 * A driver (step-loop.ts, or a virtual clock in perf/sim-fit.ts) calls `runStep(nowMs)` when the
 * previous step is due; the engine emits that step's tokens, schedules the next step and returns
 * how long it takes (or when it must wake up, or that it is idle).
 *
 * Per step: admit waiting requests (FIFO) while running < maxRunningRequests and their KV blocks
 * fit; every prefilled request decodes `tokensPerStep` tokens; the rest of the token budget goes
 * to chunked prefill, oldest first. A request whose prefill completes in a step gets its first
 * token at the end of that step.
 *   step ms = stepBaseMs + stepPerRequestMs·batch + stepPerKvTokenMs·(KV tokens of the batch)
 *           + Σ prefill chunk tokens · (prefillPerTokenMs + prefillPerTokenPerKPositionMs·position/1000)
 */

import { KvCache, type KvLease, type PromptBlocks } from './kv-cache.js';
import { SlotCache } from './slot-cache.js';
import type { SimProfile } from './profiles.js';

export type FinishReason = 'length' | 'stop' | 'abort' | 'error';

/** Receives a request's output; implemented by the HTTP layer. */
export interface SimSink {
  /** the engine admitted the request (it is running now) */
  onAdmit(nowMs: number): void;
  /** `n` new tokens; `finish` set on the last emission */
  onTokens(n: number, finish: FinishReason | undefined): void;
}

export class EngineRequest {
  /** monoMs when the request reaches the waiting queue (after overhead and tokenization) */
  readyAtMs = 0;
  admittedMs: number | undefined;
  /** admitted at this time into a slot that a request finishing at the same instant freed (a hand-over; handingOver) */
  handedOverMs: number | undefined;
  lease: KvLease | undefined;
  /** its llama.cpp slot while it runs (slot-cache.ts), when the engine keeps one prompt a slot */
  slot: number | undefined;
  cachedTokens = 0;
  prefillDone = 0;
  prefillTarget = 0;
  generated = 0;
  /** tokens generated but not yet written (frontend busy) */
  held = 0;
  /** no tokens before this time (stall fault) */
  stalledUntilMs = 0;
  stallAtToken = Infinity;
  stallMs = 0;
  finished = false;
  /** scheduled this step: prefill tokens computed, and whether it emits tokens */
  stepPrefill = 0;
  stepEmits = false;

  constructor(
    readonly prompt: PromptBlocks,
    /** output length cap */
    readonly maxTokens: number,
    /** length at which a simulated EOS stops it (Infinity with ignore_eos) */
    readonly eosAt: number,
    readonly sink: SimSink,
  ) {}
}

export interface EngineCounters {
  promptTokensTotal: number;
  generationTokensTotal: number;
  prefixQueriesTokensTotal: number;
  prefixHitsTokensTotal: number;
  requestsFinishedTotal: number;
  stepCount: number;
  /** requests computed in each step, summed over the steps (llama.cpp n_busy_slots_per_decode × n_decode_total) */
  busySlotsTotal: number;
}

export type StepPlan = { kind: 'step'; durationMs: number } | { kind: 'wait'; untilMs: number } | { kind: 'idle' };

export class SimEngine {
  readonly kv: KvCache;
  /**
   * llama.cpp personality: the prompt cache is one prompt a slot (slot-cache.ts) and a request's
   * cached tokens come from its slot; the block cache then only accounts for KV room
   */
  readonly slots: SlotCache | undefined;
  /** arrived, not yet through the frontend */
  private arriving: EngineRequest[] = [];
  readonly waiting: EngineRequest[] = [];
  running: EngineRequest[] = [];
  /** emitStep is walking `running` (see abort) */
  private emitting = false;
  private droppedWhileEmitting = false;
  private frontendFreeAtMs = 0;
  readonly counters: EngineCounters = {
    promptTokensTotal: 0,
    generationTokensTotal: 0,
    prefixQueriesTokensTotal: 0,
    prefixHitsTokensTotal: 0,
    requestsFinishedTotal: 0,
    stepCount: 0,
    busySlotsTotal: 0,
  };
  /** batch and KV tokens of the step in progress (for /_sim/state) */
  lastBatch = 0;
  lastStepMs = 0;
  /** when the last step was planned (handingOver) */
  private lastPlanMs = -1;

  constructor(readonly profile: SimProfile) {
    this.kv = new KvCache(profile.kvCapacityTokens, profile.blockSize);
    if (profile.personality === 'llamacpp' && profile.llamacppSlotCache !== false) this.slots = new SlotCache(profile.maxRunningRequests, profile.blockSize);
  }

  /** gives back what a request that ended holds: its KV blocks and its slot */
  private releaseHeld(r: EngineRequest): void {
    if (r.lease) this.kv.release(r.lease);
    r.lease = undefined;
    if (r.slot !== undefined) this.slots?.release(r.slot);
    r.slot = undefined;
  }

  get kvUsedTokens(): number {
    return this.kv.usedBlocks * this.kv.blockSize;
  }
  get kvCapacityTokens(): number {
    return this.kv.totalBlocks * this.kv.blockSize;
  }
  /**
   * The request was admitted into a place freed at that same instant, and no step has been planned
   * since: llama.cpp answers `/slots` at the start of its next loop turn before the request that turn
   * hands the freed slot to, so its slot reads idle until then (routes-llamacpp.ts).
   */
  handingOver(r: EngineRequest): boolean {
    return r.handedOverMs !== undefined && r.handedOverMs === this.lastPlanMs;
  }

  /** requests queued: arrived (in the frontend) or waiting for admission */
  get waitingCount(): number {
    return this.waiting.length + this.arriving.length;
  }

  /** A new request arrives at `nowMs`. */
  submit(req: EngineRequest, nowMs: number): void {
    const p = this.profile;
    const frontendStart = Math.max(nowMs, this.frontendFreeAtMs);
    const frontendEnd = frontendStart + p.frontendMsPerRequest + req.prompt.tokens * p.frontendMsPerToken;
    this.frontendFreeAtMs = frontendEnd;
    req.readyAtMs = frontendEnd + p.requestOverheadMs + req.prompt.tokens * p.requestMsPerToken;
    this.arriving.push(req);
  }

  /** Removes a request wherever it is and frees its blocks (client disconnect, fault). */
  abort(req: EngineRequest): void {
    if (req.finished) return;
    req.finished = true;
    this.releaseHeld(req);
    removeFrom(this.arriving, req);
    removeFrom(this.waiting, req);
    // a sink aborting its own request while emitStep walks `running` (a close-after or error-after
    // fault): removing it now would shift the next request past the loop; emitStep drops it after
    if (this.emitting) this.droppedWhileEmitting = true;
    else removeFrom(this.running, req);
  }

  /**
   * The step that was planned is due at `nowMs`: emit its tokens, then plan the next one.
   * On the first call (or after idle/wait) there is nothing to emit.
   */
  runStep(nowMs: number): StepPlan {
    const finished = this.emitStep(nowMs);
    return this.planStep(nowMs, finished);
  }

  /** emits the step's tokens; returns how many requests finished (their places freed at `nowMs`) */
  private emitStep(nowMs: number): number {
    const p = this.profile;
    const hold = p.frontendBlocksStreaming && nowMs < this.frontendFreeAtMs;
    let finished = 0;
    const running = this.running;
    this.emitting = true;
    try {
      for (let i = 0; i < running.length; i++) {
        const r = running[i] as EngineRequest;
        if (r.stepPrefill > 0) {
          r.prefillDone += r.stepPrefill;
          r.stepPrefill = 0;
        }
        if (!r.stepEmits) {
          if (r.held > 0 && !hold) this.flush(r, undefined);
          continue;
        }
        r.stepEmits = false;
        const limit = Math.min(r.maxTokens, r.eosAt);
        const n = Math.min(p.tokensPerStep, limit - r.generated, r.stallAtToken - r.generated);
        if (n <= 0) continue;
        r.generated += n;
        this.counters.generationTokensTotal += n;
        // a stall reached here is armed by planStep, which runs next at the same nowMs
        const finish: FinishReason | undefined =
          r.generated >= r.maxTokens ? 'length' : r.generated >= r.eosAt ? 'stop' : undefined;
        if (finish) {
          r.finished = true;
          finished++;
          this.counters.requestsFinishedTotal++;
          this.releaseHeld(r);
        }
        r.held += n;
        if (!hold || finish) this.flush(r, finish);
      }
    } finally {
      this.emitting = false;
    }
    if (finished > 0 || this.droppedWhileEmitting) this.running = running.filter((r) => !r.finished);
    this.droppedWhileEmitting = false;
    return finished;
  }

  private flush(r: EngineRequest, finish: FinishReason | undefined): void {
    const n = r.held;
    r.held = 0;
    r.sink.onTokens(n, finish);
  }

  /** `freed`: requests that finished at `nowMs`, whose places the first admitted take over (hand-overs) */
  private planStep(nowMs: number, freed: number): StepPlan {
    const p = this.profile;
    // frontend → waiting
    if (this.arriving.length > 0) {
      let k = 0;
      while (k < this.arriving.length && (this.arriving[k] as EngineRequest).readyAtMs <= nowMs) k++;
      if (k > 0) for (const r of this.arriving.splice(0, k)) this.waiting.push(r);
    }
    // admission, FIFO; the first as many as finished at this instant take over their places
    this.lastPlanMs = nowMs;
    let handOvers = freed;
    while (this.waiting.length > 0 && this.running.length < p.maxRunningRequests) {
      const r = this.waiting[0] as EngineRequest;
      const lease = this.kv.tryAdmit(r.prompt, r.maxTokens);
      if (!lease) break;
      this.waiting.shift();
      r.lease = lease;
      r.cachedTokens = lease.cachedTokens;
      const slot = this.slots?.acquire(r.prompt);
      if (slot) {
        r.slot = slot.slot;
        r.cachedTokens = slot.cachedTokens;
      }
      r.prefillDone = r.cachedTokens;
      r.prefillTarget = r.prompt.tokens;
      r.admittedMs = nowMs;
      r.handedOverMs = handOvers > 0 ? nowMs : undefined;
      if (handOvers > 0) handOvers--;
      this.counters.promptTokensTotal += r.prompt.tokens;
      this.counters.prefixQueriesTokensTotal += r.prompt.tokens;
      this.counters.prefixHitsTokensTotal += r.cachedTokens;
      this.running.push(r);
      r.sink.onAdmit(nowMs);
    }
    // compose the step
    let budget = p.maxBatchedTokens;
    let batch = 0;
    let kvTokens = 0;
    let prefillMs = 0;
    let anyWork = false;
    let anyHeld = false;
    for (const r of this.running) {
      if (r.held > 0) anyHeld = true;
      if (r.prefillDone < r.prefillTarget) continue;
      if (r.stallAtToken <= r.generated) {
        // a stall planned before any (more) token
        r.stalledUntilMs = nowMs + r.stallMs;
        r.stallAtToken = Infinity;
      }
      if (r.stalledUntilMs > nowMs) continue;
      r.stepEmits = true;
      batch++;
      kvTokens += r.prompt.tokens + r.generated;
      budget -= p.tokensPerStep;
      anyWork = true;
    }
    for (const r of this.running) {
      if (budget <= 0) break;
      if (r.prefillDone >= r.prefillTarget) continue;
      const chunk = Math.min(budget, r.prefillTarget - r.prefillDone);
      budget -= chunk;
      r.stepPrefill = chunk;
      const midPosK = (r.prefillDone + chunk / 2) / 1000;
      prefillMs += chunk * (p.prefillPerTokenMs + p.prefillPerTokenPerKPositionMs * midPosK);
      kvTokens += r.prefillDone;
      batch++;
      anyWork = true;
      // the step that completes the prefill samples the first token
      if (r.prefillDone + chunk >= r.prefillTarget && r.stalledUntilMs <= nowMs && r.stallAtToken > r.generated) r.stepEmits = true;
    }
    this.lastBatch = batch;
    if (anyWork) {
      const durationMs = p.stepBaseMs + p.stepPerRequestMs * batch + p.stepPerKvTokenMs * kvTokens + prefillMs;
      this.counters.stepCount++;
      this.counters.busySlotsTotal += batch;
      this.lastStepMs = durationMs;
      return { kind: 'step', durationMs };
    }
    // nothing to compute: wake for the next arrival, stall end or held output
    let until = Infinity;
    if (this.arriving.length > 0) until = Math.min(until, (this.arriving[0] as EngineRequest).readyAtMs);
    for (const r of this.running) if (r.stalledUntilMs > nowMs) until = Math.min(until, r.stalledUntilMs);
    if (anyHeld) until = Math.min(until, Math.max(nowMs, this.frontendFreeAtMs));
    if (until === Infinity) return { kind: 'idle' };
    return { kind: 'wait', untilMs: until };
  }
}

function removeFrom(list: EngineRequest[], req: EngineRequest): void {
  const i = list.indexOf(req);
  if (i >= 0) list.splice(i, 1);
}
