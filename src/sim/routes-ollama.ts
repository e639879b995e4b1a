/**
 * The Ollama personality's own routes (ENGINES.md §6): version, the loaded models (/api/ps), the
 * local ones (/api/tags), /api/show, and the root's "Ollama is running".
 */

import { sendJson, sendText } from './reply.js';
import { RequestError } from './request-body.js';
import type { Routes, SimContext } from './route-table.js';

export function ollamaRoutes(ctx: SimContext): Routes {
  const { profile } = ctx;
  const details = { parent_model: '', format: 'gguf', family: 'sim', families: ['sim'], parameter_size: '1B', quantization_level: 'Q4_K_M' };
  return {
    'GET /api/version': ({ res }) => sendJson(res, 200, { version: profile.version }),
    'GET /api/ps': ({ res }) =>
      sendJson(res, 200, {
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
      }),
    'GET /api/tags': ({ res }) => sendJson(res, 200, { models: [{ name: profile.modelId, model: profile.modelId, size: 2_000_000_000, details }] }),
    'POST /api/show': async ({ req, res }) => {
      const body = await ctx.readBody(req);
      if (body.model !== profile.modelId) throw new RequestError(404, `model '${String(body.model)}' not found`, 'model');
      sendJson(res, 200, {
        parameters: `num_ctx ${profile.maxModelLen}`,
        template: '{{ .Prompt }}',
        details,
        model_info: { 'general.architecture': 'sim', 'sim.context_length': profile.maxModelLen, 'general.parameter_count': 1_000_000_000 },
      });
    },
    'GET /': ({ res }) => sendText(res, 'Ollama is running', 'text/plain; charset=utf-8'),
  };
}

/**
 * The bare personality's own routes: Ollama's `GET /api/tags` with the one model (its OpenAI
 * emulation lists models both ways). No /api/chat, /api/generate, /api/ps or /api/show: a client
 * that takes it for Ollama finds only this (the ollamaVersion knob adds /api/version, routes.ts).
 */
export function bareRoutes(ctx: SimContext): Routes {
  const { profile } = ctx;
  return {
    'GET /api/tags': ({ res }) =>
      sendJson(res, 200, { models: [{ name: profile.modelId, model: profile.modelId, modified_at: '1970-01-01T00:00:00Z', size: 0, digest: '', details: {} }] }),
  };
}
