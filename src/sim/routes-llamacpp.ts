/**
 * The llama.cpp personality's own routes (ENGINES.md §3): /props and /slots in b4748's shapes
 * (recorded from a real server), /metrics (501 unless started with --metrics), tokenize,
 * detokenize and apply-template.
 */

import { renderChat, type ChatMessage } from './chat-template.js';
import type { SimEngine } from './engine-model.js';
import { renderLlamacppMetrics } from './metrics.js';
import { sendJson, sendText } from './reply.js';
import { RequestError } from './request-body.js';
import type { Routes, SimContext } from './route-table.js';

/** One /slots entry: slot `id`, busy with `r` or idle; the first is also /props' default_generation_settings. */
function slotJson(ctx: SimContext, id: number, r: SimEngine['running'][number] | undefined) {
  return {
    id,
    id_task: r ? id + 1000 : -1,
    n_ctx: ctx.maxLen,
    speculative: false,
    is_processing: r !== undefined,
    non_causal: false,
    params: { n_predict: r ? r.maxTokens : -1, temperature: 0.8, top_k: 40, top_p: 0.95, max_tokens: r ? r.maxTokens : -1, ignore_eos: false, stream: true, timings_per_token: false },
    prompt: '',
    next_token: { has_next_token: r !== undefined, has_new_line: false, n_remain: r ? r.maxTokens - r.generated : -1, n_decoded: r ? r.generated : 0, stopping_word: '' },
  };
}

export function llamacppRoutes(ctx: SimContext): Routes {
  const { profile, engine, vocab } = ctx;
  const slots = profile.maxRunningRequests;
  return {
    'GET /props': ({ res }) =>
      sendJson(res, 200, {
        default_generation_settings: slotJson(ctx, 0, undefined),
        total_slots: slots,
        model_path: `${profile.modelId}.gguf`,
        chat_template: '{{ messages }}',
        bos_token: '<s>',
        eos_token: '</s>',
        build_info: `b${profile.version}`,
      }),
    // started without --slots / --metrics: llama.cpp answers 501 with its not_supported_error
    'GET /slots':
      profile.llamacppSlots === false
        ? () => {
            throw new RequestError(501, 'This server does not support slots endpoint. Start it with `--slots`', null, 'NotSupportedError');
          }
        : ({ res, query }) => {
            // a request handed a slot freed at this turn's start reads idle until the next turn (SimEngine.handingOver)
            const running = engine.running.filter((r) => !engine.handingOver(r));
            const out = [];
            for (let id = 0; id < slots; id++) out.push(slotJson(ctx, id, running[id]));
            if (query.get('fail_on_no_slot') === '1' && out.every((s) => s.is_processing)) {
              throw new RequestError(503, 'no slot available', null, 'ServiceUnavailableError');
            }
            sendJson(res, 200, out);
          },
    'GET /metrics':
      profile.llamacppMetrics === 'off'
        ? () => {
            throw new RequestError(501, 'This server does not support metrics endpoint. Start it with `--metrics`', null, 'NotSupportedError');
          }
        : ({ res }) => sendText(res, renderLlamacppMetrics(engine, ctx.totals, profile.llamacppMetrics === 'current' ? 'current' : 'b4748')),
    'POST /tokenize': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      if (typeof body.content !== 'string') throw new RequestError(400, 'tokenize needs "content" (string)', 'content');
      const t = vocab.tokenize(body.content);
      const tokens = body.with_pieces === true ? t.ids.map((id, i) => ({ id, piece: t.pieces[i] })) : t.ids;
      sendJson(res, 200, { tokens });
    },
    'POST /detokenize': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      if (!Array.isArray(body.tokens)) throw new RequestError(400, 'detokenize needs "tokens" (array of ids)', 'tokens');
      sendJson(res, 200, { content: vocab.detokenize(body.tokens as number[]) });
    },
    'POST /apply-template': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      if (!Array.isArray(body.messages)) throw new RequestError(400, 'apply-template needs "messages"', 'messages');
      sendJson(res, 200, { prompt: renderChat(body.messages as ChatMessage[], true) });
    },
  };
}
