/**
 * Fault injection: a per-request plan, from the `X-Sim-Fault` header (tests) or drawn from the
 * profile's rates with a PRNG seeded by (profile seed, request id or arrival number), so a run
 * is reproducible.
 *
 * Header syntax, comma-separated: `status=500` (also 429, 503), `stall-ms=2000@5` (no tokens for
 * 2 s after token 5), `error-after=5` (error event after 5 tokens, then [DONE]), `close-after=5`
 * (connection ended without [DONE]), `close-before` (connection closed before a byte of the answer),
 * `malformed-after=3` (a chunk that is not JSON),
 * `huge-chunk-after=3` (a chunk with `huge-bytes` of text, default 1 MiB), `headers-delay-ms=500`,
 * `usage-factor=2` (every usage says completion_tokens × 2: usage twice the streamed tokens).
 */

import type { SimFaultRates } from './knobs.js';
import { fnv1a } from '../random.js';

export interface FaultPlan {
  status?: number;
  stallMs?: number;
  stallAfter?: number;
  errorAfter?: number;
  closeAfter?: number;
  closeBefore?: boolean;
  malformedAfter?: number;
  hugeAfter?: number;
  hugeBytes?: number;
  headersDelayMs?: number;
  /** usage reports completion_tokens × this (undefined = honest) */
  usageFactor?: number;
}


export function requestSeed(profileSeed: number, key: string): number {
  return fnv1a(key, 0, key.length, (0x811c9dc5 ^ profileSeed) >>> 0);
}

function int(key: string, v: string | undefined): number {
  const n = Number(v);
  if (v === undefined || v === '' || !Number.isFinite(n) || n < 0) {
    throw new Error(`X-Sim-Fault ${key}=${String(v)} is invalid: it needs a number ≥ 0`);
  }
  return Math.floor(n);
}

/** Parses the X-Sim-Fault header; throws a message naming the bad part. */
export function parseFaultHeader(header: string): FaultPlan {
  const plan: FaultPlan = {};
  for (const raw of header.split(/[,;]/)) {
    const part = raw.trim();
    if (!part) continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq).trim();
    const value = eq < 0 ? undefined : part.slice(eq + 1).trim();
    switch (key) {
      case 'status': {
        const s = int(key, value);
        if (s < 400 || s > 599) throw new Error(`X-Sim-Fault status=${s} is invalid: use an HTTP error status 400–599`);
        plan.status = s;
        break;
      }
      case 'stall-ms': {
        const [ms, after] = (value ?? '').split('@');
        plan.stallMs = int(key, ms);
        plan.stallAfter = after === undefined ? 0 : int(key, after);
        break;
      }
      case 'error-after':
        plan.errorAfter = int(key, value);
        break;
      case 'close-after':
        plan.closeAfter = int(key, value);
        break;
      case 'close-before':
        plan.closeBefore = true;
        break;
      case 'malformed-after':
        plan.malformedAfter = int(key, value);
        break;
      case 'huge-chunk-after':
        plan.hugeAfter = int(key, value);
        break;
      case 'huge-bytes':
        plan.hugeBytes = int(key, value);
        break;
      case 'headers-delay-ms':
        plan.headersDelayMs = int(key, value);
        break;
      case 'usage-factor': {
        const f = Number(value);
        if (value === undefined || value === '' || !Number.isFinite(f) || f < 0) {
          throw new Error(`X-Sim-Fault usage-factor=${String(value)} is invalid: it needs a number ≥ 0 (2 = usage twice the streamed tokens)`);
        }
        plan.usageFactor = f;
        break;
      }
      default:
        throw new Error(
          `X-Sim-Fault "${key}" is unknown: use status, stall-ms, error-after, close-after, close-before, malformed-after, huge-chunk-after, huge-bytes, headers-delay-ms or usage-factor`,
        );
    }
  }
  return plan;
}

/** Draws a plan from the profile's rates (each fault independently). */
export function drawFaults(rates: SimFaultRates, rng: () => number): FaultPlan {
  const plan: FaultPlan = {};
  const after = rates.faultAfterTokens;
  if (rng() < rates.http500Rate) plan.status = 500;
  else if (rng() < rates.http429Rate) plan.status = 429;
  else if (rng() < rates.http503Rate) plan.status = 503;
  if (rng() < rates.stallRate) {
    plan.stallMs = rates.stallMs;
    plan.stallAfter = after;
  }
  if (rng() < rates.errorRate) plan.errorAfter = after;
  if (rng() < rates.closeRate) plan.closeAfter = after;
  if (rng() < rates.malformedRate) plan.malformedAfter = after;
  if (rng() < rates.closeBeforeRate) plan.closeBefore = true;
  if (rng() < rates.hugeChunkRate) {
    plan.hugeAfter = after;
    plan.hugeBytes = rates.hugeChunkBytes;
  }
  if (rng() < rates.headersDelayRate) plan.headersDelayMs = rates.headersDelayMs;
  // not drawn (no rng call: the draws of the other faults stay as they were)
  if (rates.usageFactor !== undefined && rates.usageFactor !== 1) plan.usageFactor = rates.usageFactor;
  return plan;
}
