/**
 * The TensorRT-LLM personality's own routes (ENGINES.md §5): version, the JSON iteration stats of
 * /metrics (each scrape drains the queue) and the Prometheus text of /prometheus/metrics.
 */

import { renderTrtllmPrometheus } from './metrics.js';
import { sendJson, sendText } from './reply.js';
import type { Routes, SimContext } from './route-table.js';

export function trtllmRoutes(ctx: SimContext): Routes {
  const { profile, engine } = ctx;
  // a fresh server has run no iteration: its first scrape is empty
  let lastScrapedStep = 0;
  return {
    'GET /version': ({ res }) => sendJson(res, 200, { version: profile.version }),
    'GET /metrics': ({ res }) => {
      // JSON iteration stats; each scrape drains the queue: no step since the last scrape → []
      const step = engine.counters.stepCount;
      const stats = [];
      if (step !== lastScrapedStep) {
        const used = engine.kv.usedBlocks;
        stats.push({
          timestamp: new Date().toISOString(),
          iter: step,
          numActiveRequests: engine.running.length,
          numQueuedRequests: engine.waiting.length,
          maxNumActiveRequests: profile.maxRunningRequests,
          kvCacheStats: {
            maxNumBlocks: engine.kv.totalBlocks,
            freeNumBlocks: engine.kv.totalBlocks - used,
            usedNumBlocks: used,
            tokensPerBlock: engine.kv.blockSize,
            allocTotalBlocks: used,
            reusedBlocks: 0,
            cacheHitRate: 0,
          },
          inflightBatchingStats: { numScheduledRequests: engine.running.length, numContextRequests: 0, numGenRequests: engine.running.length },
        });
      }
      lastScrapedStep = step;
      sendJson(res, 200, stats);
    },
    'GET /prometheus/metrics': ({ res }) => sendText(res, renderTrtllmPrometheus(engine, ctx.totals, ctx.ttft)),
  };
}
