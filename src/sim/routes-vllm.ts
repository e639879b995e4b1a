/**
 * The vLLM personality's own routes (ENGINES.md §1): version, Prometheus metrics, tokenize and
 * detokenize, and /server_info when the profile gives server arguments.
 */

import { renderMetrics } from './metrics.js';
import { detokenizeIds, sendJson, sendText, tokenizeBody } from './reply.js';
import type { Routes, SimContext } from './route-table.js';

export function vllmRoutes(ctx: SimContext): Routes {
  const { profile, engine, vocab } = ctx;
  const routes: Routes = {
    'GET /version': ({ res }) => sendJson(res, 200, { version: profile.version }),
    'GET /metrics': ({ res }) => sendText(res, renderMetrics(profile, engine, ctx.ttft, ctx.totals)),
    'POST /tokenize': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      const t = tokenizeBody(vocab, body);
      const out: Record<string, unknown> = { count: t.ids.length, max_model_len: profile.maxModelLen, tokens: t.ids };
      if (body.return_token_strs === true) out.token_strs = t.pieces;
      sendJson(res, 200, out);
    },
    'POST /detokenize': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      sendJson(res, 200, { prompt: vocab.detokenize(detokenizeIds(body)) });
    },
  };
  if (profile.serverArgs) {
    // only with VLLM_SERVER_DEV_MODE=1 on a real server: the sim serves it when serverArgs are given
    const serverArgs = profile.serverArgs;
    routes['GET /server_info'] = ({ res }) =>
      sendJson(res, 200, {
        vllm_config: { model_config: { model: profile.modelId, max_model_len: profile.maxModelLen }, scheduler_config: { max_num_seqs: profile.maxRunningRequests }, ...serverArgs },
      });
  }
  return routes;
}
