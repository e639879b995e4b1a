/**
 * The TGI personality's own routes (ENGINES.md §4): /info, Prometheus metrics, tokenize and
 * chat_tokenize (TGI answers a bad body 422).
 */

import { renderChat, type ChatMessage } from './chat-template.js';
import { renderTgiMetrics } from './metrics.js';
import { TGI_DEFAULT_MAX_CONCURRENT_REQUESTS } from './profiles.js';
import { sendJson, sendText } from './reply.js';
import { RequestError } from './request-body.js';
import type { Routes, SimContext } from './route-table.js';

export function tgiRoutes(ctx: SimContext): Routes {
  const { profile, engine } = ctx;
  return {
    'GET /info': ({ res }) =>
      sendJson(res, 200, {
        model_id: profile.modelId,
        model_sha: null,
        model_pipeline_tag: 'text-generation',
        max_concurrent_requests: profile.admissionLimit ?? TGI_DEFAULT_MAX_CONCURRENT_REQUESTS,
        max_best_of: 2,
        max_stop_sequences: 4,
        max_input_tokens: profile.maxModelLen - 1,
        max_total_tokens: profile.maxModelLen,
        validation_workers: 2,
        max_client_batch_size: 4,
        router: 'text-generation-router',
        version: profile.version,
        sha: null,
        docker_label: null,
      }),
    'GET /metrics': ({ res }) => sendText(res, renderTgiMetrics(engine, ctx.totals)),
    'POST /tokenize': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      if (typeof body.inputs !== 'string') throw new RequestError(422, 'tokenize needs "inputs" (string)', 'inputs');
      sendJson(res, 200, tgiTokens(ctx, body.inputs));
    },
    'POST /chat_tokenize': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      if (!Array.isArray(body.messages)) throw new RequestError(422, 'chat_tokenize needs "messages"', 'messages');
      const templated = renderChat(body.messages as ChatMessage[], true);
      sendJson(res, 200, { tokenize_response: tgiTokens(ctx, templated), templated_text: templated });
    },
  };
}

function tgiTokens(ctx: SimContext, text: string): Array<{ id: number; text: string; start: number; stop: number }> {
  const t = ctx.vocab.tokenize(text);
  let at = 0;
  return t.ids.map((id, i) => {
    const piece = t.pieces[i]!;
    const start = text.indexOf(piece, at);
    at = start + piece.length;
    return { id, text: piece, start, stop: at };
  });
}
