/**
 * The SGLang personality's own routes (ENGINES.md §2): version, Prometheus metrics, tokenize and
 * detokenize under /v1, /abort_request by rid, and the server info under both of its names.
 */

import { renderMetrics } from './metrics.js';
import { detokenizeIds, sendEmpty, sendJson, sendText, tokenizeBody } from './reply.js';
import type { Handler, Routes, SimContext } from './route-table.js';

export function sglangRoutes(ctx: SimContext): Routes {
  const { profile, engine, vocab } = ctx;
  const serverInfo: Handler = ({ res }) =>
    sendJson(res, 200, {
      model_path: `sim/${profile.modelId}`,
      served_model_name: profile.modelId,
      tp_size: 1,
      pp_size: 1,
      dp_size: 1,
      context_length: profile.maxModelLen,
      max_running_requests: profile.maxRunningRequests,
      chunked_prefill_size: profile.maxBatchedTokens,
      page_size: profile.blockSize,
      disable_radix_cache: !profile.prefixCaching,
      stream_interval: profile.tokensPerStep,
      enable_metrics: true,
      api_key: null,
      max_total_num_tokens: engine.kvCapacityTokens,
      max_req_input_len: profile.maxModelLen - 1,
      internal_states: [{ last_gen_throughput: 0 }],
      version: profile.version,
      ...profile.serverArgs,
    });
  return {
    'GET /version': ({ res }) => sendJson(res, 200, { version: profile.version }),
    'GET /metrics': ({ res }) => sendText(res, renderMetrics(profile, engine, ctx.ttft, ctx.totals)),
    'POST /v1/tokenize': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      if (Array.isArray(body.prompt)) {
        const all = (body.prompt as unknown[]).map((p) => vocab.tokenize(String(p)).ids);
        return sendJson(res, 200, { tokens: all, count: all.map((a) => a.length), max_model_len: profile.maxModelLen });
      }
      const t = tokenizeBody(vocab, body);
      sendJson(res, 200, { tokens: t.ids, count: t.ids.length, max_model_len: profile.maxModelLen });
    },
    'POST /v1/detokenize': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      sendJson(res, 200, { text: vocab.detokenize(detokenizeIds(body)) });
    },
    'POST /abort_request': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      abortByRid(ctx, body.rid);
      sendEmpty(res);
    },
    'GET /get_server_info': serverInfo,
    'GET /server_info': serverInfo,
  };
}

/** SGLang POST /abort_request {rid}: stop the request now, as the engine does, and end its stream */
function abortByRid(ctx: SimContext, rids: unknown): void {
  for (const rid of Array.isArray(rids) ? rids : [rids]) {
    if (typeof rid !== 'string') continue;
    ctx.abortedByRid.push(rid);
    if (ctx.abortedByRid.length > 1000) ctx.abortedByRid.shift();
    const r = ctx.running.get(rid);
    if (!r) continue;
    r.stop();
    if (!r.res.writableEnded) r.res.end();
  }
}
