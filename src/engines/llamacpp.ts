/**
 * llama.cpp `llama-server` adapter (ENGINES.md §3).
 *
 * Requests: `max_tokens`, `ignore_eos` when forceLength (llama.cpp has no `min_tokens`) and
 * `stream_options.include_usage`; nothing else. Not `timings_per_token`: it doubles every event
 * (the cumulative `timings` on each chunk), and on b4748 events of about 480 bytes or more (a long
 * model id echoed in each) reach the client bunched: 40–50 % of the gaps between chunks under
 * 0.5 ms, bursts of 20–40 tokens, seen by a plain Python socket too, against 1–2 % without it. A
 * benchmark must not change the stream it times. The server's own timings still come on the
 * final chunk (the cross-check's per-request timings); a chunk that carries `timings` (a server
 * started with per-token timings, or a recorded stream) still gives its count from `predicted_n`.
 *
 * Probe: `/v1/models` (model), `/props` (`default_generation_settings.n_ctx` is the context of one
 * slot = the longest request; `total_slots` = requests that run at once; KV capacity = n_ctx ×
 * total_slots, or n_ctx where the slots share one cache (`-kvu`, the default from b6925 when `-np`
 * is not given), which only a local server's command line tells (factsFromCommandLine); `build_info`
 * = version), `/slots` (busy slots; on by default), `/metrics` when it has `llamacpp:` series (needs
 * --metrics), `POST /tokenize` (tried once).
 *
 * State, each figure only where the server exposes it (an absent series is unknown, never 0):
 * running from, best first, the decode counters `n_decode_total` × `n_busy_slots_per_decode` (a
 * window's mean busy slots that does not depend on when each scrape was served; metrics/server-load.ts),
 * else `requests_processing` sampled, else the busy slots of `GET /slots` sampled (`runningFrom:
 * 'slots'`), else nothing (the client's own timelines decide, judge/status.ts); waiting =
 * `requests_deferred`. llama.cpp counts `tokens_predicted_total` when a request ends, so it is not
 * a generation counter over a window and is not reported as one; the cross-check uses the
 * per-request `timings` instead.
 *
 * Metric names: b4748 (the build our real checks run) exposes `prompt_tokens_total`,
 * `prompt_seconds_total`, `tokens_predicted_total`, `tokens_predicted_seconds_total`,
 * `n_decode_total`, `n_busy_slots_per_decode`, `prompt_tokens_seconds`,
 * `predicted_tokens_seconds`, `kv_cache_usage_ratio`, `kv_cache_tokens`, `requests_processing`,
 * `requests_deferred`. Upstream today (tools/server/server-task.cpp `to_metrics`, read in 2026)
 * drops the two kv_cache gauges and adds `prompt_tokens_cached_total`, `n_tokens_max` and the
 * `spec_decode_*` counters, keeping the decode counters; forks that track it (issue 18: August
 * 2026) may drop the decode counters too and keep `kv_cache_tokens`. Every name is read when
 * present and none is needed. `/slots` entries carry `is_processing` in both (today's also
 * `next_token` as a one-element array and `n_prompt_tokens*`); llama.cpp from 2024 had a numeric
 * `state` (0 = idle) instead, which is read too. A /slots body whose entries carry neither gives
 * no running figure.
 *
 * Prefix cache (metrics/prefix-cache.ts 'processed-tokens'): b4748 has no hit counter and no
 * `cache_n` in `timings` (server.cpp `result_timings`: prompt_n, prompt_ms, …, predicted_*);
 * `timings.prompt_n` is the slot's processed prompt tokens (the cached common prefix skipped) while
 * `usage.prompt_tokens` is the whole prompt (`n_prompt_tokens`), so their difference per request
 * is its cache hit; `prompt_tokens_total` adds the processed tokens when a request's first token
 * is sampled (`on_prompt_eval`), read as promptTokensProcessedTotal.
 *
 * Abort: llama.cpp cancels a task when its connection closes; there is no call by request id, so
 * no `abort`. The drain barrier waits for idle slots through readMetrics.
 *
 * Connections: llama.cpp's HTTP server (cpp-httplib) serves each connection on one of its
 * n_parallel + 2 threads for as long as the connection is open, idle keep-alive included. So every
 * control call here closes its connection (`CONTROL`): an idle scrape connection would hold a thread
 * that a load request then waits for, and a cell with free slots would look queued. Measured on
 * b4748 with 4 slots: 2K/4 went from Requests queued (3.3 slots busy) to Valid.
 */
import { asNumber, asRecord, asString, isOk, NOT_READY_FIX, notReady, postJson, tryCall, type HttpCallOptions } from './http.js';
import { decodeOpenAIChunk, OpenAIAdapter, modelsFacts, probeError, probeModels } from './openai.js';
import { scanOpenAIChunk, scannedLlamaTimings } from './openai-scan.js';
import { parsePrometheus, sumMetric, type PromSample } from './prometheus.js';
import { tokenizeError } from './tokenize.js';
import type { DecodedChunk, EndpointKind, EngineKind, HttpTarget, MetricsSample, ReadServerProcess, RequestSpec, ServerFacts, ServerRequestTimings } from '../shapes/engine.js';
import { monoMs } from '../clock.js';

export const LLAMACPP_METRICS_PATH = '/metrics';
export const LLAMACPP_SLOTS_PATH = '/slots';
export const LLAMACPP_TOKENIZE_PATH = '/tokenize';
/** every control call closes its connection (see the header) */
const CONTROL: HttpCallOptions = { closeConnection: true };
/** tokenize and template calls of long prompts */
const CONTROL_SLOW: HttpCallOptions = { ...CONTROL, timeoutMs: 60_000 };

/** The `timings` object of a llama.cpp chunk, or undefined. */
export function parseLlamaTimings(value: unknown): ServerRequestTimings | undefined {
  const t = asRecord(value);
  if (!t) return undefined;
  const out: ServerRequestTimings = {};
  const set = (key: keyof ServerRequestTimings, v: unknown): void => {
    const n = asNumber(v);
    if (n !== undefined && n >= 0) out[key] = n;
  };
  set('promptN', t.prompt_n);
  set('cacheN', t.cache_n);
  set('promptMs', t.prompt_ms);
  set('predictedN', t.predicted_n);
  set('predictedMs', t.predicted_ms);
  set('predictedPerSecond', t.predicted_per_second);
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A llama.cpp chunk: the OpenAI reading plus `timings` (as continuous usage when no usage is on the chunk). */
export function decodeLlamacppChunk(payload: unknown): DecodedChunk {
  return withLlamaTimings(decodeOpenAIChunk(payload), parseLlamaTimings(asRecord(payload)?.timings));
}

/** decodeLlamacppChunk's reading straight from the bytes (engines/openai-scan.ts), or undefined where the scan does not cover the chunk */
export function scanLlamacppChunk(bytes: Uint8Array, start: number, end: number, wantText: boolean): DecodedChunk | undefined {
  const out = scanOpenAIChunk(bytes, start, end, wantText);
  if (out === undefined) return undefined;
  const timings = scannedLlamaTimings();
  return timings === false ? undefined : withLlamaTimings(out, timings);
}

function withLlamaTimings(out: DecodedChunk, timings: ServerRequestTimings | undefined): DecodedChunk {
  if (!timings) return out;
  out.serverTimings = timings;
  if (!out.usage && timings.predictedN !== undefined) {
    const usage: NonNullable<DecodedChunk['usage']> = { completionTokens: timings.predictedN };
    if (timings.promptN !== undefined) usage.promptTokens = timings.promptN + (timings.cacheN ?? 0);
    if (timings.cacheN !== undefined) usage.cachedTokens = timings.cacheN;
    out.usage = usage;
  }
  return out;
}

/**
 * Busy and total slots from a `/slots` body: an array of slots, each with a boolean
 * `is_processing` (b4748 and later) or a numeric `state` (older builds; 0 = idle). Undefined when
 * the body is not such an array or any slot says neither: a slot whose state is not given is not
 * idle, it is unknown.
 */
export function slotsState(json: unknown): { busy: number; total: number } | undefined {
  if (!Array.isArray(json)) return undefined;
  let busy = 0;
  for (const s of json) {
    const slot = asRecord(s);
    const processing = slot?.is_processing;
    const state = asNumber(slot?.state);
    if (typeof processing === 'boolean') busy += processing ? 1 : 0;
    else if (state !== undefined) busy += state !== 0 ? 1 : 0;
    else return undefined;
  }
  return { busy, total: json.length };
}

/**
 * One llama.cpp `/metrics` scrape, normalised: each field only where its series is present (b4748
 * names and today's; see the file header).
 */
export function llamacppMetricsFromSamples(samples: readonly PromSample[], atMs: number): MetricsSample {
  const out: MetricsSample = { atMs };
  const set = <K extends keyof MetricsSample>(key: K, value: MetricsSample[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  set('running', sumMetric(samples, ['llamacpp:requests_processing']));
  set('waiting', sumMetric(samples, ['llamacpp:requests_deferred']));
  set('kvUsage', sumMetric(samples, ['llamacpp:kv_cache_usage_ratio']));
  set('promptTokensTotal', sumMetric(samples, ['llamacpp:prompt_tokens_total']));
  // llama.cpp's prompt counter leaves the cached tokens out (b4748 and today's): processed tokens
  set('promptTokensProcessedTotal', out.promptTokensTotal);
  set('decodeCallsTotal', sumMetric(samples, ['llamacpp:n_decode_total']));
  set('busySlotsPerDecode', sumMetric(samples, ['llamacpp:n_busy_slots_per_decode']));
  return out;
}

/**
 * The first llama.cpp build whose server can give its slots one shared KV cache (`-kvu`, and its
 * default when `-np` is not given: b6925, "server : support unified cache across slots", 2025-11-02).
 * Each slot then takes up to the whole n_ctx, and `/props` says n_ctx per slot as before: the
 * slots hold n_ctx in all, not n_ctx × total_slots, and nothing the server answers says which.
 */
export const SHARED_KV_SINCE_BUILD = 6925;

/**
 * The server may share one KV cache among its slots: more than one slot, and a build from
 * SHARED_KV_SINCE_BUILD on, or one without a build number (`b0-unknown`, built without git) whose
 * `/props` has the fields of 2025 builds (`modalities`; b4748's has none of them).
 */
export function mayShareKvCache(props: Record<string, unknown>): boolean {
  const slots = asNumber(props.total_slots);
  if (slots === undefined || slots <= 1) return false;
  const build = Number(/^b(\d+)/.exec(asString(props.build_info) ?? '')?.[1] ?? 0);
  return build > 0 ? build >= SHARED_KV_SINCE_BUILD : 'modalities' in props;
}

/** Facts from a `/props` body. */
export function llamacppPropsFacts(json: unknown): Partial<ServerFacts> {
  const root = asRecord(json);
  if (!root) return {};
  const out: Partial<ServerFacts> = {};
  const nCtx = asNumber(asRecord(root.default_generation_settings)?.n_ctx);
  const slots = asNumber(root.total_slots);
  if (nCtx !== undefined && nCtx > 0) out.maxModelLen = { value: nCtx, source: 'GET /props default_generation_settings.n_ctx (per slot)' };
  if (slots !== undefined && slots > 0) out.maxRunningRequests = { value: slots, source: 'GET /props total_slots' };
  if (nCtx !== undefined && nCtx > 0 && slots !== undefined && slots > 0) {
    // a shared cache would hold n_ctx in all: the larger figure is kept, so no cell is held back
    // that could run (METHOD.md: when the budget is unknown, run the cell), and the source says so
    const shared = mayShareKvCache(root)
      ? `, if each slot has its own KV cache (llama-server -np N); one the slots share (-kvu, its default when -np is not given) holds ${nCtx.toLocaleString('en-US')} in all: then set target.kvCapacityTokens to ${nCtx}`
      : '';
    out.kvCapacityTokens = { value: nCtx * slots, source: `GET /props n_ctx × total_slots${shared}` };
  }
  const build = asString(root.build_info);
  if (build !== undefined) out.version = { value: build, source: 'GET /props build_info' };
  return out;
}

/** the environment variables llama-server reads for the flags kvLayoutFromArgs reads */
export const LLAMACPP_LAYOUT_ENV = ['LLAMA_ARG_N_PARALLEL', 'LLAMA_ARG_KV_UNIFIED', 'LLAMA_ARG_CTX_SIZE'] as const;

/**
 * How the KV cache is laid out, from llama-server's command line and the environment variables it
 * reads for the same flags (a local server's, read by the caller; flags win). First by the numbers
 * where the context is given (`-c`/`--ctx-size`/LLAMA_ARG_CTX_SIZE = C > 0): each of several slots
 * holding C is one shared cache, the slots holding C together a cache each. Else by the flags:
 * `-kvu`/`--kv-unified` shares it, `-no-kvu` does not; `-np N` (N > 1) gives each slot its own, no
 * `-np` (or `-np -1`, auto) shares it, as does `-np 1` where the server shows more slots (builds
 * b6925 to b7432 turn it into 4 sharing one). Undefined where that cannot be told: an environment
 * that could not be read and no flag that decides, or a value it cannot read.
 */
export function kvLayoutFromArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string>> | undefined,
  nCtx: number,
  slots: number,
): { shared: boolean; why: string } | undefined {
  let kvu: boolean | undefined;
  let np: string | undefined;
  let ctx: string | undefined;
  for (let i = 1; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    // llama.cpp's long options take _ for - as well
    const name = flag.startsWith('--') ? flag.replace(/_/g, '-') : flag;
    if (name === '-kvu' || name === '--kv-unified') kvu = true;
    else if (name === '-no-kvu' || name === '--no-kv-unified') kvu = false;
    else if (name === '-np' || name === '--parallel') np = value();
    else if (name === '-c' || name === '--ctx-size') ctx = value();
  }
  const bool = (v: string | undefined): boolean | undefined => (v === undefined ? undefined : /^(1|true|on|yes|enabled)$/i.test(v) ? true : /^(0|false|off|no|disabled)$/i.test(v) ? false : undefined);
  kvu ??= bool(env?.LLAMA_ARG_KV_UNIFIED);
  const npFrom = np !== undefined ? '-np' : env?.LLAMA_ARG_N_PARALLEL !== undefined ? 'LLAMA_ARG_N_PARALLEL' : undefined;
  np ??= env?.LLAMA_ARG_N_PARALLEL;
  ctx ??= env?.LLAMA_ARG_CTX_SIZE;
  const c = ctx === undefined ? undefined : Number(ctx);
  if (c !== undefined && Number.isInteger(c) && c > 0 && slots > 1) {
    if (nCtx === c) return { shared: true, why: `has -c ${c}, and each of its ${slots} slots holds ${c.toLocaleString('en-US')}` };
    if (nCtx * slots === c) return { shared: false, why: `has -c ${c}, and its ${slots} slots hold ${nCtx.toLocaleString('en-US')} each` };
  }
  if (kvu !== undefined) return { shared: kvu, why: kvu ? 'has -kvu' : 'has -no-kvu' };
  if (np !== undefined) {
    const n = Number(np);
    if (!Number.isInteger(n)) return undefined;
    const said = npFrom === '-np' ? `-np ${n}` : `LLAMA_ARG_N_PARALLEL=${n}`;
    if (n < 0) return { shared: true, why: `has ${said} (auto)` };
    if (n === 1 && slots > 1) return { shared: true, why: `has ${said} and the server shows ${slots} slots sharing one cache` };
    return { shared: false, why: `has ${said}` };
  }
  // no -np anywhere, where the environment could be read to say so
  return env === undefined ? undefined : { shared: true, why: 'has no -np' };
}

export class LlamacppAdapter extends OpenAIAdapter {
  override readonly kind: EngineKind = 'llamacpp';
  /** `/slots` answered at probe time */
  private slots = false;
  /** the server may share one KV cache among its slots (mayShareKvCache of its `/props`) */
  private mayShareKv = false;

  protected override extraFields(spec: RequestSpec): Record<string, unknown> {
    return spec.forceLength ? { ignore_eos: true } : {};
  }

  override decodeChunk(payload: unknown): DecodedChunk {
    return decodeLlamacppChunk(payload);
  }

  override scanChunk(bytes: Uint8Array, start: number, end: number, wantText: boolean): DecodedChunk | undefined {
    return scanLlamacppChunk(bytes, start, end, wantText);
  }

  async factsFromCommandLine(readServer: ReadServerProcess, facts: ServerFacts): Promise<ServerFacts | undefined> {
    const nCtx = facts.maxModelLen?.value;
    const slots = facts.maxRunningRequests?.value;
    if (!this.mayShareKv || nCtx === undefined || slots === undefined) return undefined;
    const server = await readServer(/^llama-server/, LLAMACPP_LAYOUT_ENV);
    const layout = server && kvLayoutFromArgs(server.argv, server.env, nCtx, slots);
    if (!server || !layout) return undefined;
    const read = `the command line of the server's process, pid ${server.pid}, ${layout.why}`;
    const kvCapacityTokens = layout.shared
      ? { value: nCtx, source: `GET /props n_ctx: the ${slots} slots share one KV cache (${read})` }
      : { value: nCtx * slots, source: `GET /props n_ctx × total_slots: a KV cache per slot (${read})` };
    return { ...facts, kvCapacityTokens };
  }

  explainError(message: string, facts: ServerFacts): string | undefined {
    if (message.includes('Context size has been exceeded')) {
      const nCtx = facts.maxModelLen?.value;
      const slots = facts.maxRunningRequests?.value;
      const kv = facts.kvCapacityTokens;
      // the run already holds the shared cache's capacity: then the cache filled some other way
      if (nCtx === undefined || slots === undefined || slots <= 1 || kv === undefined || kv.value <= nCtx) {
        return "llama.cpp's KV cache filled, and it fails every request it is running at once";
      }
      return (
        `llama.cpp's KV cache filled, and it fails every request it is running at once: its ${slots} slots likely share one cache ` +
        `(-kvu, its default when started without -np), which holds n_ctx = ${nCtx.toLocaleString('en-US')} tokens in all, not ${kv.value.toLocaleString('en-US')} as read. ` +
        `Set target.kvCapacityTokens to ${nCtx} so such cells read Over capacity, or start the server with -np ${slots} for a cache per slot`
      );
    }
    if (/does not match the expected .* format/.test(message)) {
      return (
        'llama.cpp parses each reply when it ends and fails the request when the text does not parse: a reply cut inside a multi-byte character ' +
        'by max_tokens (the benchmark forces the length), or the stray bytes a model with random weights samples'
      );
    }
    return undefined;
  }

  override async probe(target: HttpTarget, model?: string): Promise<ServerFacts> {
    const models = await probeModels(target, model, CONTROL);
    const facts = modelsFacts('llamacpp', models);
    const [props, slots, metrics, tokenize] = await Promise.all([
      tryCall(target, 'GET', '/props', undefined, CONTROL),
      tryCall(target, 'GET', LLAMACPP_SLOTS_PATH, undefined, CONTROL),
      tryCall(target, 'GET', LLAMACPP_METRICS_PATH, undefined, CONTROL),
      tryCall(target, 'POST', LLAMACPP_TOKENIZE_PATH, { content: 'Hi', add_special: true, parse_special: true }, CONTROL),
    ]);
    // a server still loading its model, where its models list already answered: the run waits for it
    if (notReady(props?.status)) throw probeError(target, 'not-ready', `the server is not ready: GET /props answered HTTP ${props!.status}`, NOT_READY_FIX);
    if (isOk(props)) Object.assign(facts, llamacppPropsFacts(props.json));
    this.mayShareKv = isOk(props) && mayShareKvCache(asRecord(props.json) ?? {});
    this.slots = isOk(slots) && slotsState(slots.json) !== undefined;
    if (isOk(metrics) && metrics.text.includes('llamacpp:')) facts.metricsPath = LLAMACPP_METRICS_PATH;
    if (isOk(tokenize) && Array.isArray(asRecord(tokenize.json)?.tokens)) facts.tokenizePath = LLAMACPP_TOKENIZE_PATH;
    return facts;
  }

  async readMetrics(target: HttpTarget, facts: ServerFacts): Promise<MetricsSample | undefined> {
    if (!facts.metricsPath && !this.slots) return undefined;
    const startMs = monoMs();
    // one after the other: one control connection at a time, so with C = slots the load's
    // connections and the scrape fit the server's n_parallel + 2 threads; a scrape that waited for
    // a thread would be served exactly when a stream ended, and read one slot short. `/slots` only
    // when the metrics have no running figure (none, or off).
    const metrics = facts.metricsPath ? await tryCall(target, 'GET', facts.metricsPath, undefined, CONTROL) : undefined;
    const parsed = isOk(metrics) ? llamacppMetricsFromSamples(parsePrometheus(metrics.text).samples, 0) : undefined;
    const slots = this.slots && parsed?.running === undefined ? await tryCall(target, 'GET', LLAMACPP_SLOTS_PATH, undefined, CONTROL) : undefined;
    const endMs = monoMs();
    const out: MetricsSample = { ...parsed, atMs: (startMs + endMs) / 2 };
    const state = isOk(slots) ? slotsState(slots.json) : undefined;
    if (state) {
      out.running = state.busy;
      out.runningFrom = 'slots';
      out.slotsTotal = state.total;
    }
    if (out.running === undefined && out.waiting === undefined && out.promptTokensTotal === undefined && out.decodeCallsTotal === undefined) return undefined;
    return out;
  }

  private async tokenizeCount(target: HttpTarget, path: string, text: string): Promise<number> {
    const res = await postJson(target, path, { content: text, add_special: true, parse_special: true }, CONTROL_SLOW);
    const tokens = isOk(res) ? asRecord(res.json)?.tokens : undefined;
    if (!Array.isArray(tokens)) throw tokenizeError(target, path, res);
    return tokens.length;
  }

  /** Completions: `/tokenize` of the text. Chat: `/apply-template` renders the messages, then `/tokenize`. */
  async countTokens(target: HttpTarget, facts: ServerFacts, text: string, endpoint: EndpointKind): Promise<number | undefined> {
    if (!facts.tokenizePath) return undefined;
    if (endpoint === 'completions') return this.tokenizeCount(target, facts.tokenizePath, text);
    const res = await postJson(target, '/apply-template', { messages: [{ role: 'user', content: text }] }, CONTROL_SLOW);
    const prompt = isOk(res) ? asString(asRecord(res.json)?.prompt) : undefined;
    if (prompt === undefined) throw tokenizeError(target, '/apply-template', res);
    return this.tokenizeCount(target, facts.tokenizePath, prompt);
  }
}
