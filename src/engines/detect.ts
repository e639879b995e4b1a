/**
 * Which engine serves a target, and the adapter registry.
 *
 * Detection order (first that answers wins):
 * 1. `GET /v1/models` `owned_by`: vllm → vllm, sglang → sglang, llamacpp → llamacpp,
 *    tensorrt_llm → trtllm. (TGI's owned_by is the model id and Ollama's "library": not decisive.)
 * 2. `GET /get_server_info` is a JSON object with `max_total_num_tokens` or `internal_states` → sglang.
 * 3. `GET /info` has `model_id` and `max_total_tokens`/`max_input_tokens` → tgi.
 * 4. `GET /api/version` has `version` → ollama.
 * 5. `GET /props` has `default_generation_settings` → llamacpp.
 * 6. `GET /metrics`: Prometheus series prefix `vllm:` → vllm, `sglang:` → sglang, `llamacpp:` →
 *    llamacpp, `tgi_` → tgi; a JSON array of iteration stats (`kvCacheStats`) → trtllm.
 * 7. else 'openai' (the generic adapter) with a note saying how to choose.
 * `GET /version` is not used: vLLM and TensorRT-LLM answer it alike.
 * Steps 2–6 are asked together, after step 1, and weighed in this order. When more than one of
 * them matches, the first wins and the detection carries a note naming the others (set `engine`).
 * A server can answer several APIs: openRun confirms the pick with one streamed request and falls
 * back to the generic adapter when it fails (src/load/confirm.ts).
 */
import { asRecord, isOk, tryCall, type HttpResult } from './http.js';
import { LlamacppAdapter } from './llamacpp.js';
import { OllamaAdapter } from './ollama.js';
import { OpenAIAdapter, ProbeError, probeModels } from './openai.js';
import { SglangAdapter } from './sglang.js';
import { TgiAdapter } from './tgi.js';
import { TrtllmAdapter } from './trtllm.js';
import { ENGINE_KINDS, type EngineAdapter, type EngineKind, type HttpTarget } from '../shapes/engine.js';
import { VllmAdapter } from './vllm.js';

export interface EngineDetection {
  kind: EngineKind;
  /** what decided it, e.g. "GET /v1/models owned_by: vllm" */
  evidence: string;
  /** set when nothing told the engine apart */
  note?: string;
}


export const UNDETECTED_NOTE =
  'could not tell which engine serves the target; using the generic OpenAI-compatible adapter (no metrics, no tokenizer, no capacity). ' +
  `Set target.engine in the config or LLM_BENCH_ENGINE to one of ${ENGINE_KINDS.join(', ')} to choose.`;

const OWNED_BY: Record<string, EngineKind> = {
  vllm: 'vllm',
  sglang: 'sglang',
  llamacpp: 'llamacpp',
  'llama.cpp': 'llamacpp',
  tensorrt_llm: 'trtllm',
};

function json(res: HttpResult | undefined): Record<string, unknown> | undefined {
  return isOk(res) ? asRecord(res.json) : undefined;
}

/** Detect the engine behind `target`. Throws only when the server cannot be reached at all. */
export async function detectEngine(target: HttpTarget): Promise<EngineDetection> {
  // probeModels throws a setup error when the server is unreachable or refuses the key
  let ownedBy: string[] = [];
  try {
    ownedBy = (await probeModels(target)).entries.map((e) => e.ownedBy ?? '');
  } catch (err) {
    // no model list at all is not fatal here (the probe later needs `model` from config); unreachable is
    if (!(err instanceof ProbeError) || err.code !== 'no-model') throw err;
  }
  for (const owner of ownedBy) {
    const kind = OWNED_BY[owner.toLowerCase()];
    if (kind) return { kind, evidence: `GET /v1/models owned_by: ${owner}` };
  }

  const [serverInfo, info, apiVersion, props, metrics] = await Promise.all([
    tryCall(target, 'GET', '/get_server_info'),
    tryCall(target, 'GET', '/info'),
    tryCall(target, 'GET', '/api/version'),
    tryCall(target, 'GET', '/props'),
    tryCall(target, 'GET', '/metrics'),
  ]);
  const found: EngineDetection[] = [];
  const si = json(serverInfo);
  if (si && ('max_total_num_tokens' in si || 'internal_states' in si)) {
    found.push({ kind: 'sglang', evidence: 'GET /get_server_info has max_total_num_tokens/internal_states' });
  }
  const tgi = json(info);
  if (tgi && 'model_id' in tgi && ('max_total_tokens' in tgi || 'max_input_tokens' in tgi)) {
    found.push({ kind: 'tgi', evidence: 'GET /info has model_id and max_total_tokens' });
  }
  const ollama = json(apiVersion);
  if (ollama && typeof ollama.version === 'string') found.push({ kind: 'ollama', evidence: 'GET /api/version answered' });
  const llama = json(props);
  if (llama && 'default_generation_settings' in llama) {
    found.push({ kind: 'llamacpp', evidence: 'GET /props has default_generation_settings' });
  }
  if (isOk(metrics)) {
    const prefixes: [string, EngineKind][] = [
      ['vllm:', 'vllm'],
      ['sglang:', 'sglang'],
      ['llamacpp:', 'llamacpp'],
      ['\ntgi_', 'tgi'],
    ];
    const body = `\n${metrics.text}`;
    const prefix = prefixes.find(([p]) => body.includes(p));
    if (prefix) found.push({ kind: prefix[1], evidence: `GET /metrics has ${prefix[0].trim()} series` });
    else if (Array.isArray(metrics.json) && metrics.json.some((e) => asRecord(e)?.kvCacheStats !== undefined)) {
      found.push({ kind: 'trtllm', evidence: 'GET /metrics is JSON iteration stats (kvCacheStats)' });
    }
  }
  const first = found[0];
  if (!first) return { kind: 'openai', evidence: 'no engine-specific endpoint answered', note: UNDETECTED_NOTE };
  const others = [...new Set(found.filter((f) => f.kind !== first.kind).map((f) => `${f.kind} (${f.evidence})`))];
  if (others.length === 0) return first;
  return {
    ...first,
    note: `detection unsure: picked ${first.kind} (${first.evidence}) but the server also looks like ${others.join(', ')}; set target.engine or LLM_BENCH_ENGINE to choose`,
  };
}

/** A new adapter for `kind`; throws a setup error naming the valid kinds for an unknown one. */
export function getAdapter(kind: EngineKind): EngineAdapter {
  switch (kind) {
    case 'vllm':
      return new VllmAdapter();
    case 'sglang':
      return new SglangAdapter();
    case 'openai':
      return new OpenAIAdapter();
    case 'llamacpp':
      return new LlamacppAdapter();
    case 'tgi':
      return new TgiAdapter();
    case 'trtllm':
      return new TrtllmAdapter();
    case 'ollama':
      return new OllamaAdapter();
    default: {
      const never: never = kind;
      throw new Error(`engine: '${String(never)}' is unknown; use one of ${ENGINE_KINDS.join(', ')}`);
    }
  }
}
