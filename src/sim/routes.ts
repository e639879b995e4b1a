/**
 * Every personality's routes as one table (route-table.ts): the OpenAI routes all of them serve
 * (completions, chat, models, health), the personality's own (routes-<personality>.ts), the
 * `/_sim/*` control routes (routes-control.ts), then the profile's wire knobs, which take
 * endpoints away or add Ollama's version. The server (server.ts) only looks requests up.
 */

import type { SimPersonality } from './profiles.js';
import { mulberry32 } from '../random.js';
import { sendEmpty, sendJson } from './reply.js';
import { completionRoute } from './routes-completion.js';
import { controlRoutes } from './routes-control.js';
import { llamacppRoutes } from './routes-llamacpp.js';
import { bareRoutes, ollamaRoutes } from './routes-ollama.js';
import { sglangRoutes } from './routes-sglang.js';
import { tgiRoutes } from './routes-tgi.js';
import { trtllmRoutes } from './routes-trtllm.js';
import { vllmRoutes } from './routes-vllm.js';
import { joinRoutes, RouteTable, type Handler, type Routes, type SimContext } from './route-table.js';

const SIM_VOCAB_SIZE = 32_000;

/** each personality's own routes */
const PERSONALITY_ROUTES: Record<SimPersonality, (ctx: SimContext) => Routes> = {
  vllm: vllmRoutes,
  sglang: sglangRoutes,
  llamacpp: llamacppRoutes,
  tgi: tgiRoutes,
  trtllm: trtllmRoutes,
  ollama: ollamaRoutes,
  bare: bareRoutes,
};

/** the metrics endpoints the noMetrics knob takes away */
const METRICS_PATHS = ['/metrics', '/prometheus/metrics'];
/** every personality's tokenize and detokenize endpoints (the noTokenize knob answers 404 on them) */
const TOKENIZE_PATHS = ['/tokenize', '/detokenize', '/v1/tokenize', '/v1/detokenize', '/chat_tokenize'];

/** The OpenAI-compatible routes every personality serves; /v1/models entries carry the personality's extras. */
function openaiRoutes(ctx: SimContext): Routes {
  const { profile, surface } = ctx;
  const p = profile.personality;
  return {
    'POST /v1/completions': completionRoute(ctx, 'completions'),
    'POST /v1/chat/completions': completionRoute(ctx, 'chat'),
    'GET /v1/models': ({ res }) => {
      const entry: Record<string, unknown> = { id: profile.modelId, object: 'model', created: 0, owned_by: surface.ownedBy(profile.modelId) };
      if (p === 'vllm' || p === 'sglang') Object.assign(entry, { root: profile.modelId, parent: null, max_model_len: profile.maxModelLen });
      if (p === 'llamacpp') entry.meta = { n_ctx_train: profile.maxModelLen, n_vocab: SIM_VOCAB_SIZE, n_params: 1_000_000 };
      sendJson(res, 200, { object: 'list', data: [entry] });
    },
    'GET /health': ({ res }) => sendEmpty(res),
  };
}

/** Takes `paths` away (any method): 404 with the reason, whatever the personality serves there. */
function withdraw(routes: Routes, paths: readonly string[], why: string, ctx: SimContext): void {
  for (const key of Object.keys(routes)) {
    if (paths.includes(key.slice(key.indexOf(' ') + 1))) delete routes[key];
  }
  for (const path of paths) {
    const gone: Handler = ({ res, method }) => ctx.sendError(res, 404, `no route ${method} ${path} (${why})`, 'NotFoundError');
    routes[`* ${path}`] = gone;
  }
}

/** the running and waiting gauges of every personality's metrics (the metricsZeroRate fault reads them 0) */
const LOAD_GAUGE_LINE = /^((?:vllm:num_requests_running|vllm:num_requests_waiting|sglang:num_running_reqs|sglang:num_queue_reqs|llamacpp:requests_processing|llamacpp:requests_deferred|tgi_batch_current_size|tgi_queue_size)(?:\{[^}]*\})?) \S+$/gm;

/**
 * The metrics faults (knobs.ts metricsZeroRate, metricsDelayRate), drawn per scrape from the
 * profile's seed: a scrape answered late, or one whose running and waiting gauges read 0.
 */
function applyMetricsFaults(routes: Routes, ctx: SimContext): void {
  const f = ctx.profile.faults;
  if (!(f.metricsZeroRate > 0) && !(f.metricsDelayRate > 0)) return;
  const rng = mulberry32(ctx.profile.seed ^ 0x6d657472);
  for (const key of Object.keys(routes)) {
    if (!key.startsWith('GET ') || !METRICS_PATHS.includes(key.slice(4))) continue;
    const handler = routes[key]!;
    routes[key] = async (call) => {
      const late = rng() < f.metricsDelayRate;
      const zero = rng() < f.metricsZeroRate;
      if (late) await new Promise((r) => setTimeout(r, f.metricsDelayMs));
      if (zero) {
        const end = call.res.end.bind(call.res) as (chunk?: unknown) => unknown;
        (call.res as { end: (chunk?: unknown) => unknown }).end = (chunk?: unknown) => end(typeof chunk === 'string' ? chunk.replace(LOAD_GAUGE_LINE, '$1 0.0') : chunk);
      }
      return handler(call);
    };
  }
}

/** Wire knobs: endpoints this server does not have, or has, whatever its personality has. */
function applyWireKnobs(routes: Routes, ctx: SimContext): void {
  const { surface, profile } = ctx;
  applyMetricsFaults(routes, ctx);
  if (surface.noMetrics) withdraw(routes, METRICS_PATHS, 'no metrics', ctx);
  if (surface.noTokenize) withdraw(routes, TOKENIZE_PATHS, 'no tokenizer endpoint', ctx);
  if (surface.ollamaVersion) routes['GET /api/version'] = ({ res }) => sendJson(res, 200, { version: profile.version });
}

/** The server's whole table: shared, personality and control routes joined, then the wire knobs. */
export function routeTable(ctx: SimContext): RouteTable {
  const routes = joinRoutes(openaiRoutes(ctx), PERSONALITY_ROUTES[ctx.profile.personality](ctx), controlRoutes(ctx));
  applyWireKnobs(routes, ctx);
  return new RouteTable(routes);
}
