/**
 * The arrival schedule of an open-loop rate cell: when each request is due, fixed before the
 * window opens (issue 22). Sends follow the schedule; they never wait on the server.
 *
 * Processes (vLLM `bench serve` convention, so figures compare):
 *   - `constant`: one request every 1 / rate seconds;
 *   - `poisson`: exponential gaps of mean 1 / rate (gamma with burstiness 1);
 *   - `gamma` with burstiness b > 0: gaps drawn from Gamma(shape b, scale 1 / (rate · b)), mean
 *     1 / rate, coefficient of variation 1 / √b (b < 1 burstier than Poisson, b > 1 smoother).
 * An optional linear ramp-up comes before the window: the rate climbs from 0 to `rate` over
 * `rampMs`, so the server is loaded when the window opens; ramp requests are sent and measured
 * but lie outside the window.
 *
 * Seeded (src/random.ts): the same seed gives the same schedule, recorded in the result.
 */
import { mulberry32 } from '../random.js';
import type { Arrival } from '../shapes/arrival.js';

export type { Arrival };

export interface ScheduleSpec {
  /** requests per second inside the window (> 0) */
  rate: number;
  process: Arrival;
  seed: number;
  /** the window's length; arrivals are scheduled through it */
  windowMs: number;
  /** linear ramp-up before the window (0: none) */
  rampMs?: number;
}

export interface ArrivalSchedule {
  /** due times in ms from the schedule's start, ascending; the window opens at `windowStartMs` */
  atMs: Float64Array;
  /** the window opens this long after the schedule's start (the ramp's length) */
  windowStartMs: number;
  /** the first arrival inside the window (index into atMs) */
  firstInWindow: number;
}

/** Standard normal draws by Box–Muller from a uniform source (one of each pair is kept). */
function normal(u: () => number): number {
  // 1 - u() is in (0, 1]: log never sees 0
  return Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

/**
 * One Gamma(shape, 1) draw: Marsaglia and Tsang's squeeze method for shape ≥ 1; for shape < 1 a
 * Gamma(shape + 1) draw times U^(1 / shape).
 */
export function gammaDraw(shape: number, u: () => number): number {
  if (shape < 1) return gammaDraw(shape + 1, u) * Math.pow(1 - u(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (let tries = 0; tries < 1000; tries++) {
    const x = normal(u);
    const v0 = 1 + c * x;
    if (v0 <= 0) continue;
    const v = v0 * v0 * v0;
    const w = 1 - u();
    if (w < 1 - 0.0331 * x ** 4 || Math.log(w) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
  return shape; // unreachable in practice (acceptance is above 95 %); the mean keeps the loop bounded
}

/** One gap in seconds at `rate` requests/s. */
function gapS(p: Arrival, rate: number, u: () => number): number {
  if (p.kind === 'constant') return 1 / rate;
  if (p.kind === 'poisson') return -Math.log(1 - u()) / rate;
  return gammaDraw(p.burstiness, u) / (rate * p.burstiness);
}

/**
 * The schedule of one rate cell. During the ramp the instantaneous rate is rate · t / rampMs; its
 * arrivals are the process's, stretched through the inverse of the ramp's cumulative intensity
 * (so a Poisson ramp is an inhomogeneous Poisson process with that intensity).
 */
export function arrivalSchedule(spec: ScheduleSpec): ArrivalSchedule {
  const { rate, process, windowMs } = spec;
  const rampMs = spec.rampMs ?? 0;
  const u = mulberry32(spec.seed);
  // arrivals of a unit-rate process in "operational time" τ (expected arrivals so far)
  const rampArrivals = (rate * rampMs) / 2000; // ∫ rate · t / ramp dt over the ramp, in requests
  const endTau = rampArrivals + (rate * windowMs) / 1000;
  const out: number[] = [];
  let firstInWindow = -1;
  // constant: the first arrival at the window's (or ramp's) start; random: one gap in
  let tau = process.kind === 'constant' ? 0 : gapS(process, 1, u);
  const bound = Math.ceil(endTau * 4 + 1000); // a generous bound on the loop: 4 × the expected count
  for (let i = 0; tau < endTau && i < bound; i++) {
    let t: number;
    if (tau < rampArrivals) {
      // τ = rate · t² / (2 · ramp) inside the ramp
      t = Math.sqrt((2000 * tau * rampMs) / rate) / 1000;
    } else {
      t = rampMs / 1000 + (tau - rampArrivals) / rate;
    }
    const atMs = t * 1000;
    if (firstInWindow < 0 && atMs >= rampMs) firstInWindow = out.length;
    out.push(atMs);
    tau += gapS(process, 1, u);
  }
  return { atMs: Float64Array.from(out), windowStartMs: rampMs, firstInWindow: firstInWindow < 0 ? out.length : firstInWindow };
}
