/**
 * Endpoints of the llama.cpp, TGI, TensorRT-LLM and Ollama personalities (ENGINES.md §3–§6):
 * capacity, state, identity, tokenize and metrics. The completion endpoints are shared
 * (server.ts); these only read the shared engine.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderChat, type ChatMessage } from './chat-template.js';
import { RequestError } from './completion.js';
import type { SimEngine } from './engine.js';
import { renderLlamacppMetrics, renderTgiMetrics, renderTrtllmPrometheus, type RequestTotals, type SecondsHistogram } from './metrics.js';
import { TGI_DEFAULT_MAX_CONCURRENT_REQUESTS, type SimProfile } from './profiles.js';
import type { TokenVocab } from './tokenizer.js';
import type { TruthRecord } from './truth.js';

/** Request totals kept by the HTTP layer. */
export class ServerTotals implements RequestTotals {
  requestsReceived = 0;
  requestsSucceeded = 0;
  requestsFailed = 0;
  promptTokensFinished = 0;
  predictedTokensFinished = 0;
  promptSecondsTotal = 0;
  predictedSecondsTotal = 0;

  noteEnd(t: TruthRecord): void {
    if (t.end === 'done') this.requestsSucceeded++;
    else if (t.end === 'error') this.requestsFailed++;
    this.promptTokensFinished += t.promptComputedTokens;
    this.predictedTokensFinished += t.completionTokens;
    if (t.firstTokenMs !== undefined) {
      this.promptSecondsTotal += t.promptMsUntil(t.firstTokenMs) / 1000;
      if (t.endMs !== undefined) this.predictedSecondsTotal += Math.max(0, t.endMs - t.firstTokenMs) / 1000;
    }
  }
}

export interface RouteContext {
  profile: SimProfile;
  engine: SimEngine;
  vocab: TokenVocab;
  ttft: SecondsHistogram;
  totals: ServerTotals;
  /** the longest request the server takes (llama.cpp: per slot) */
  maxLen: number;
  sendJson(res: ServerResponse, status: number, value: unknown): void;
  readBody(req: IncomingMessage): Promise<Record<string, unknown>>;
  tokenizeBody(body: Record<string, unknown>): { ids: number[]; pieces: string[] };
}

export type PersonalityRoute = (method: string, path: string, query: URLSearchParams, req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

const SIM_VOCAB_SIZE = 32_000;

/** 200 with a text body; the default content type is Prometheus' text format */
export function sendText(res: ServerResponse, text: string, contentType = 'text/plain; version=0.0.4; charset=utf-8'): void {
  res.writeHead(200, { 'content-type': contentType });
  res.end(text);
}

/** The handler for the personality's own endpoints; resolves true when it answered. */
export function createPersonalityRoutes(ctx: RouteContext): PersonalityRoute {
  switch (ctx.profile.personality) {
    case 'llamacpp':
      return llamacppRoutes(ctx);
    case 'tgi':
      return tgiRoutes(ctx);
    case 'trtllm':
      return trtllmRoutes(ctx);
    case 'ollama':
      return ollamaRoutes(ctx);
    case 'bare':
      return bareRoutes(ctx);
    default:
      return () => Promise.resolve(false);
  }
}

function llamacppRoutes(ctx: RouteContext): PersonalityRoute {
  const { profile, engine } = ctx;
  const slots = profile.maxRunningRequests;
  const buildInfo = `b${profile.version}`;
  return async (method, path, query, req, res) => {
    // /props and /slots in b4748's shapes (recorded from a real server): one slot object per slot,
    // the first as default_generation_settings
    const slotJson = (id: number, r: (typeof engine.running)[number] | undefined) => ({
      id,
      id_task: r ? id + 1000 : -1,
      n_ctx: ctx.maxLen,
      speculative: false,
      is_processing: r !== undefined,
      non_causal: false,
      params: { n_predict: r ? r.maxTokens : -1, temperature: 0.8, top_k: 40, top_p: 0.95, max_tokens: r ? r.maxTokens : -1, ignore_eos: false, stream: true, timings_per_token: false },
      prompt: '',
      next_token: { has_next_token: r !== undefined, has_new_line: false, n_remain: r ? r.maxTokens - r.generated : -1, n_decoded: r ? r.generated : 0, stopping_word: '' },
    });
    if (method === 'GET' && path === '/props') {
      ctx.sendJson(res, 200, {
        default_generation_settings: slotJson(0, undefined),
        total_slots: slots,
        model_path: `${profile.modelId}.gguf`,
        chat_template: '{{ messages }}',
        bos_token: '<s>',
        eos_token: '</s>',
        build_info: buildInfo,
      });
      return true;
    }
    // started without --slots / --metrics: llama.cpp answers 501 with its not_supported_error
    if (method === 'GET' && path === '/slots' && profile.llamacppSlots === false) {
      throw new RequestError(501, 'This server does not support slots endpoint. Start it with `--slots`', null, 'NotSupportedError');
    }
    if (method === 'GET' && path === '/metrics' && profile.llamacppMetrics === 'off') {
      throw new RequestError(501, 'This server does not support metrics endpoint. Start it with `--metrics`', null, 'NotSupportedError');
    }
    if (method === 'GET' && path === '/slots') {
      const running = engine.running;
      const out = [];
      for (let id = 0; id < slots; id++) out.push(slotJson(id, running[id]));
      if (query.get('fail_on_no_slot') === '1' && out.every((s) => s.is_processing)) {
        throw new RequestError(503, 'no slot available', null, 'ServiceUnavailableError');
      }
      ctx.sendJson(res, 200, out);
      return true;
    }
    if (method === 'GET' && path === '/metrics') {
      sendText(res, renderLlamacppMetrics(engine, ctx.totals, profile.llamacppMetrics === 'current' ? 'current' : 'b4748'));
      return true;
    }
    if (method === 'POST' && path === '/tokenize') {
      const body = await ctx.readBody(req);
      if (typeof body.content !== 'string') throw new RequestError(400, 'tokenize needs "content" (string)', 'content');
      const t = ctx.vocab.tokenize(body.content);
      const tokens = body.with_pieces === true ? t.ids.map((id, i) => ({ id, piece: t.pieces[i] })) : t.ids;
      ctx.sendJson(res, 200, { tokens });
      return true;
    }
    if (method === 'POST' && path === '/detokenize') {
      const body = await ctx.readBody(req);
      if (!Array.isArray(body.tokens)) throw new RequestError(400, 'detokenize needs "tokens" (array of ids)', 'tokens');
      ctx.sendJson(res, 200, { content: ctx.vocab.detokenize(body.tokens as number[]) });
      return true;
    }
    if (method === 'POST' && path === '/apply-template') {
      const body = await ctx.readBody(req);
      if (!Array.isArray(body.messages)) throw new RequestError(400, 'apply-template needs "messages"', 'messages');
      ctx.sendJson(res, 200, { prompt: renderChat(body.messages as ChatMessage[], true) });
      return true;
    }
    return false;
  };
}

function tgiRoutes(ctx: RouteContext): PersonalityRoute {
  const { profile, engine } = ctx;
  return async (method, path, _query, req, res) => {
    if (method === 'GET' && path === '/info') {
      ctx.sendJson(res, 200, {
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
      });
      return true;
    }
    if (method === 'GET' && path === '/metrics') {
      sendText(res, renderTgiMetrics(engine, ctx.totals));
      return true;
    }
    if (method === 'POST' && path === '/tokenize') {
      const body = await ctx.readBody(req);
      if (typeof body.inputs !== 'string') throw new RequestError(422, 'tokenize needs "inputs" (string)', 'inputs');
      ctx.sendJson(res, 200, tgiTokens(ctx, body.inputs));
      return true;
    }
    if (method === 'POST' && path === '/chat_tokenize') {
      const body = await ctx.readBody(req);
      if (!Array.isArray(body.messages)) throw new RequestError(422, 'chat_tokenize needs "messages"', 'messages');
      const templated = renderChat(body.messages as ChatMessage[], true);
      ctx.sendJson(res, 200, { tokenize_response: tgiTokens(ctx, templated), templated_text: templated });
      return true;
    }
    return false;
  };
}

function tgiTokens(ctx: RouteContext, text: string): Array<{ id: number; text: string; start: number; stop: number }> {
  const t = ctx.vocab.tokenize(text);
  let at = 0;
  return t.ids.map((id, i) => {
    const piece = t.pieces[i]!;
    const start = text.indexOf(piece, at);
    at = start + piece.length;
    return { id, text: piece, start, stop: at };
  });
}

function trtllmRoutes(ctx: RouteContext): PersonalityRoute {
  const { profile, engine } = ctx;
  // a fresh server has run no iteration: its first scrape is empty
  let lastScrapedStep = 0;
  return (method, path, _query, _req, res) => {
    if (method === 'GET' && path === '/metrics') {
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
      ctx.sendJson(res, 200, stats);
      return Promise.resolve(true);
    }
    if (method === 'GET' && path === '/prometheus/metrics') {
      sendText(res, renderTrtllmPrometheus(engine, ctx.totals, ctx.ttft));
      return Promise.resolve(true);
    }
    return Promise.resolve(false);
  };
}

function ollamaRoutes(ctx: RouteContext): PersonalityRoute {
  const { profile } = ctx;
  const details = { parent_model: '', format: 'gguf', family: 'sim', families: ['sim'], parameter_size: '1B', quantization_level: 'Q4_K_M' };
  return async (method, path, _query, req, res) => {
    if (method === 'GET' && path === '/api/version') {
      ctx.sendJson(res, 200, { version: profile.version });
      return true;
    }
    if (method === 'GET' && path === '/api/ps') {
      ctx.sendJson(res, 200, {
        models: [
          {
            name: profile.modelId,
            model: profile.modelId,
            size: 2_000_000_000,
            digest: 'sha256:0000000000000000000000000000000000000000000000000000000000000000',
            details,
            expires_at: new Date(Date.now() + 300_000).toISOString(),
            size_vram: 2_000_000_000,
            context_length: profile.maxModelLen,
          },
        ],
      });
      return true;
    }
    if (method === 'GET' && path === '/api/tags') {
      ctx.sendJson(res, 200, { models: [{ name: profile.modelId, model: profile.modelId, size: 2_000_000_000, details }] });
      return true;
    }
    if (method === 'POST' && path === '/api/show') {
      const body = await ctx.readBody(req);
      if (body.model !== profile.modelId) throw new RequestError(404, `model '${String(body.model)}' not found`, 'model');
      ctx.sendJson(res, 200, {
        parameters: `num_ctx ${profile.maxModelLen}`,
        template: '{{ .Prompt }}',
        details,
        model_info: { 'general.architecture': 'sim', 'sim.context_length': profile.maxModelLen, 'general.parameter_count': 1_000_000_000 },
      });
      return true;
    }
    if (method === 'GET' && path === '/') {
      sendText(res, 'Ollama is running', 'text/plain; charset=utf-8');
      return true;
    }
    return false;
  };
}

/**
 * The bare personality's own routes: Ollama's `GET /api/tags` with the one model (its OpenAI
 * emulation lists models both ways). No /api/chat, /api/generate, /api/ps or /api/show: a client
 * that takes it for Ollama finds only this (the ollamaVersion knob adds /api/version, server.ts).
 */
function bareRoutes(ctx: RouteContext): PersonalityRoute {
  const { profile } = ctx;
  return (method, path, _query, _req, res) => {
    if (method === 'GET' && path === '/api/tags') {
      ctx.sendJson(res, 200, { models: [{ name: profile.modelId, model: profile.modelId, modified_at: '1970-01-01T00:00:00Z', size: 0, digest: '', details: {} }] });
      return Promise.resolve(true);
    }
    return Promise.resolve(false);
  };
}

export { SIM_VOCAB_SIZE };
