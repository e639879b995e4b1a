/**
 * The `/_sim/*` routes every personality serves: the server's state, the ground-truth records
 * (all, since a time, or one by request id) and the reset between tests.
 */

import { performance } from 'node:perf_hooks';
import { sendJson } from './reply.js';
import type { Routes, SimContext } from './route-table.js';

function quantile(sorted: number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

/** GET /_sim/state: the engine's queues and counters, the step loop's lateness, the event loop's load. */
function state(ctx: SimContext): Record<string, unknown> {
  const { profile, engine, loop } = ctx;
  const lat = loop.latenessSamples().sort((a, b) => a - b);
  const elu = performance.eventLoopUtilization(ctx.eluStart);
  return {
    profile: profile.name,
    personality: profile.personality,
    model: profile.modelId,
    running: engine.running.length,
    waiting: engine.waiting.length,
    arriving: engine.waitingCount - engine.waiting.length,
    kvUsedTokens: engine.kvUsedTokens,
    kvCapacityTokens: engine.kvCapacityTokens,
    kvCachedFreeTokens: engine.kv.cachedFreeBlocks * engine.kv.blockSize,
    stepCount: engine.counters.stepCount,
    lastBatch: engine.lastBatch,
    lastStepMs: engine.lastStepMs,
    counters: engine.counters,
    abortedByRid: ctx.abortedByRid,
    truthRecords: ctx.truth.size,
    stepLatenessMs: { count: lat.length, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), max: lat[lat.length - 1] },
    eventLoopUtilization: elu.utilization,
  };
}

export function controlRoutes(ctx: SimContext): Routes {
  const { truth } = ctx;
  return {
    'GET /_sim/state': ({ res }) => sendJson(res, 200, state(ctx)),
    'GET /_sim/truth': ({ res, query }) => {
      const since = Number(query.get('since') ?? '-Infinity');
      sendJson(res, 200, truth.list(Number.isNaN(since) ? -Infinity : since));
    },
    // the arrival log (issue 22): when each completion request reached the server, oldest first
    'GET /_sim/arrivals': ({ res, query }) => {
      const since = Number(query.get('since') ?? '-Infinity');
      const list = truth.list(Number.isNaN(since) ? -Infinity : since).map((r) => [r.id, r.receivedMs] as const);
      sendJson(res, 200, list.sort((a, b) => a[1] - b[1]));
    },
    'GET /_sim/truth/*': ({ res, path }) => {
      const rec = truth.get(decodeURIComponent(path.slice('/_sim/truth/'.length)));
      if (!rec) return ctx.sendError(res, 404, `no truth record for ${path.slice(12)}`, 'NotFoundError');
      sendJson(res, 200, rec);
    },
    'POST /_sim/reset': ({ res }) => {
      truth.clear();
      ctx.engine.kv.clearUnused();
      ctx.engine.slots?.clearIdle();
      ctx.loop.resetLateness();
      ctx.eluStart = performance.eventLoopUtilization();
      sendJson(res, 200, { ok: true });
    },
  };
}
