/**
 * Drives a SimEngine in real time with one timer per engine step (never one per token).
 * The next step is due at (this step's due time + its duration), so a timer that fires late
 * shortens the following wait instead of drifting; when more than one whole step behind, the
 * schedule restarts from now (no burst of catch-up steps). A timer that fires early (Node measures
 * timer delays from the event loop's cached time) sleeps the rest, so no step runs early.
 * Lateness = how long after its due time a step's tokens started going out.
 */

import { monoMs } from '../clock.js';
import type { EngineRequest, SimEngine } from './engine-model.js';

/** Step lateness samples kept for /_sim/state (a ring). */
const LATENESS_RING = 8192;

export class StepLoop {
  private timer: NodeJS.Timeout | undefined;
  private dueMs = 0;
  /** 'step': a step is computing until dueMs; 'wait': sleeping until dueMs; 'idle': no timer */
  private mode: 'step' | 'wait' | 'idle' = 'idle';
  private readonly lateness = new Float64Array(LATENESS_RING);
  private latenessCount = 0;
  private closed = false;

  constructor(private readonly engine: SimEngine) {}

  submit(req: EngineRequest): void {
    const now = monoMs();
    this.engine.submit(req, now);
    if (this.mode === 'step') return;
    if (this.mode === 'wait' && this.dueMs <= req.readyAtMs) return;
    this.arm(Math.max(now, req.readyAtMs), 'wait');
  }

  /** Lateness (ms) of recent step timers, oldest first. */
  latenessSamples(): number[] {
    const n = Math.min(this.latenessCount, LATENESS_RING);
    const out: number[] = new Array(n);
    const start = this.latenessCount - n;
    for (let i = 0; i < n; i++) out[i] = this.lateness[(start + i) % LATENESS_RING] as number;
    return out;
  }

  resetLateness(): void {
    this.latenessCount = 0;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.mode = 'idle';
  }

  private arm(atMs: number, mode: 'step' | 'wait'): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.dueMs = atMs;
    this.mode = mode;
    const delay = atMs - monoMs();
    this.timer = setTimeout(this.tick, delay > 1 ? delay : 0);
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    const now = monoMs();
    if (now < this.dueMs - 0.25) {
      // Early: Node starts a timer from the loop's cached time, so a timer armed after a long
      // step fires early by that step's processing time. Sleep the rest.
      this.arm(this.dueMs, this.mode === 'step' ? 'step' : 'wait');
      return;
    }
    const wasStep = this.mode === 'step';
    const late = now - this.dueMs;
    if (wasStep) {
      this.lateness[this.latenessCount % LATENESS_RING] = late > 0 ? late : 0;
      this.latenessCount++;
    }
    const plan = this.engine.runStep(now);
    if (plan.kind === 'step') {
      // keep the schedule (a late timer shortens the next wait) unless a whole step behind
      const base = wasStep && late < plan.durationMs ? this.dueMs : now;
      this.arm(base + plan.durationMs, 'step');
    } else if (plan.kind === 'wait') {
      this.arm(plan.untilMs, 'wait');
    } else {
      this.mode = 'idle';
    }
  };
}
