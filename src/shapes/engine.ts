/**
 * The contract every engine adapter (vllm, sglang, openai, …) fulfils. Adapters shape requests,
 * interpret stream chunks, probe the server and read its metrics. They do no timing.
 */

/** Every engine kind, in the order messages list them. */
export const ENGINE_KINDS = ['vllm', 'sglang', 'openai', 'llamacpp', 'tgi', 'trtllm', 'ollama'] as const;
export type EngineKind = (typeof ENGINE_KINDS)[number];
export type EndpointKind = 'chat' | 'completions';

/** One SSE `data:` payload, interpreted. */
export interface DecodedChunk {
  /** non-empty content, reasoning or tool-call text (role-only chunks: false) */
  hasText: boolean;
  /** the text was a reasoning delta (`reasoning_content` or `reasoning`) */
  reasoning: boolean;
  /**
   * the chunk's text: content, reasoning, or tool-call name and arguments (completions: `text`);
   * what a local tokenizer counts when the stream gives no token counts
   */
  text?: string;
  /** tokens this chunk carries when the chunk says so (e.g. token_ids length); else undefined */
  tokenCount?: number;
  /** usage on this chunk (cumulative when continuous usage is on; final otherwise) */
  usage?: { promptTokens?: number; completionTokens?: number; cachedTokens?: number };
  /** the chunk's finish reason; undefined when the chunk has none, or sends null, "null" or "" */
  finishReason?: string;
  /** an error object sent inside the stream */
  error?: { message: string; code?: string | number };
  /** engine-specific end marker other than [DONE] (llama.cpp native stop:true) */
  final?: boolean;
  /** the server's own timings of this request so far (llama.cpp `timings`), for the cross-check */
  serverTimings?: ServerRequestTimings;
}

/** An adapter's scanChunk: the payload is bytes [start, end) of `bytes`, valid during the call only. */
export type ChunkScan = (bytes: Uint8Array, start: number, end: number, wantText: boolean) => DecodedChunk | undefined;

/** A server's own per-request timings (llama.cpp `timings`; cumulative over the request). */
export interface ServerRequestTimings {
  /** prompt tokens computed (cache excluded) */
  promptN?: number;
  /** prompt tokens reused from the cache */
  cacheN?: number;
  promptMs?: number;
  /** tokens generated so far */
  predictedN?: number;
  /** ms from the end of prompt processing to the last token */
  predictedMs?: number;
  /** the server's tokens/s of this request's generation */
  predictedPerSecond?: number;
}

/** A cumulative Prometheus histogram at one scrape (bucket upper bounds in seconds, ascending; +Inf last). */
export interface HistogramSnapshot {
  upperBoundsS: number[];
  /** cumulative counts per bound */
  cumulativeCounts: number[];
  count: number;
  sumS: number;
}

/** A value the probe found, with where it came from (METHOD.md run sequence 1). */
export interface Sourced<T> {
  value: T;
  /** e.g. "GET /v1/models max_model_len", "vllm:cache_config_info", "config" */
  source: string;
}

export interface ServerFacts {
  engine: Sourced<EngineKind>;
  version?: Sourced<string>;
  model: Sourced<string>;
  maxModelLen?: Sourced<number>;
  /** KV-cache capacity in tokens */
  kvCapacityTokens?: Sourced<number>;
  maxRunningRequests?: Sourced<number>;
  /** metrics endpoint path when the server exposes metrics we can read */
  metricsPath?: string;
  /** tokenize endpoint path when available */
  tokenizePath?: string;
  /** server launch arguments when the server exposes them (secrets redacted by the caller) */
  launchArgs?: Sourced<Record<string, unknown>>;
  /** block size for prefix caching, when known */
  blockSize?: Sourced<number>;
}

/** One scrape of the server's metrics, normalised; any field can be missing. */
export interface MetricsSample {
  atMs: number;
  /** requests the server is running; absent when the server does not say (never read as 0) */
  running?: number;
  /** where `running` came from when not the metrics endpoint's running gauge: llama.cpp's `GET /slots` */
  runningFrom?: 'slots';
  /** with runningFrom 'slots': the slots `GET /slots` listed, busy or idle */
  slotsTotal?: number;
  waiting?: number;
  /** 0..1 */
  kvUsage?: number;
  /**
   * the server's prompt-token counter as it names it: every prompt token for vLLM and SGLang (the
   * cached ones included), the computed ones only for llama.cpp (see promptTokensProcessedTotal)
   */
  promptTokensTotal?: number;
  /**
   * generation tokens counted as they are generated (vLLM, SGLang). Engines whose counter grows only
   * when a request ends (llama.cpp tokens_predicted_total) leave it unset.
   */
  generationTokensTotal?: number;
  /**
   * Prefix-cache hits in tokens, cumulative: prompt tokens served from the cache (vLLM
   * `prefix_cache_hits_total`, SGLang `cached_tokens_total`). With prefixQueriedTokensTotal, two
   * samples give the hit rate between them (metrics/prefix-cache.ts).
   */
  cachedTokensTotal?: number;
  /**
   * Prompt tokens looked up in the prefix cache, cumulative, in the same counting as
   * cachedTokensTotal: vLLM `prefix_cache_queries_total`; SGLang `prompt_tokens_total` (its prompt
   * count includes the cached tokens, and both grow when a request finishes). Absent when the server
   * has no such pair (llama.cpp, TGI, TRT-LLM).
   */
  prefixQueriedTokensTotal?: number;
  /**
   * Prompt tokens the server computed, the cache excluded, cumulative: llama.cpp
   * `prompt_tokens_total` (b4748 adds a slot's processed prompt tokens when its first token is
   * sampled, server.cpp `on_prompt_eval`). Against the prompt tokens sent it gives the hits.
   */
  promptTokensProcessedTotal?: number;
  /**
   * requests the load generator had in flight when this sample was taken (set by the cell runner):
   * what the server's running count is compared with for Requests queued
   */
  clientInFlight?: number;
  /** the server's time-to-first-token histogram, when it has one */
  ttftHistogram?: HistogramSnapshot;
  /**
   * llama.cpp: decode calls so far (`n_decode_total`) and the mean busy slots per decode call over
   * the server's life (`n_busy_slots_per_decode`, printed to 6 significant digits); two samples
   * give the mean busy slots between them, whatever moment each was taken (metrics/server-load.ts)
   */
  decodeCallsTotal?: number;
  busySlotsPerDecode?: number;
  /** how long the scrape took, from its request to its answer, in ms (set by the sampler) */
  scrapeMs?: number;
}

/** What the load runners ask an adapter to send. */
export interface RequestSpec {
  model: string;
  endpoint: EndpointKind;
  /** the full prompt text (chat: sent as one user message, unless `messages` is given) */
  prompt: string;
  /** chat: the messages to send instead of one user message of `prompt` (workloads with histories) */
  messages?: ReadonlyArray<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  maxTokens: number;
  /** force the full length (ignore_eos) where the engine supports it */
  forceLength: boolean;
  /** our request id (X-Request-Id); engines that take one in the body (SGLang `rid`) get it, so `abort` can name it */
  requestId?: string;
}

export interface HttpTarget {
  /** base URL without trailing slash, e.g. http://127.0.0.1:8000 */
  baseUrl: string;
  /** sent as Authorization: Bearer; never logged */
  apiKey?: string;
}

/**
 * Reads the local process that serves the target: the one named like `program` listening on its
 * port, its argv and the environment variables `env` names (undefined where its environment could
 * not be read); undefined where it cannot be told (src/meta/local-process.ts).
 */
export type ReadServerProcess = (
  program: RegExp,
  env: readonly string[],
) => Promise<{ pid: number; argv: readonly string[]; env: Readonly<Record<string, string>> | undefined } | undefined>;

export interface EngineAdapter {
  kind: EngineKind;
  /**
   * false when the engine cannot force the output length (no ignore_eos: TGI, Ollama): requests may
   * stop early, and the page says that what was produced was counted. Absent = true.
   */
  forcesLength?: boolean;
  /** path and JSON body for a streaming request */
  buildStreamRequest(spec: RequestSpec): { path: string; body: Record<string, unknown> };
  /** interpret one SSE data payload (already JSON-parsed); never throws on unknown shapes */
  decodeChunk(payload: unknown): DecodedChunk;
  /**
   * decodeChunk's reading of one payload straight from its UTF-8 bytes, without JSON.parse (the
   * client's per-token cost, issue 24); optional. It must give exactly what JSON.parse then
   * decodeChunk gives, or undefined where it does not read the payload exactly (the client then
   * parses it). `text` is filled only with `wantText`.
   */
  scanChunk?: ChunkScan;
  /** true when the stream's normal end is `[DONE]` (all OpenAI-compatible engines) */
  endsWithDone: boolean;
  /** read engine facts; model is the configured one or the first from /v1/models */
  probe(target: HttpTarget, model?: string): Promise<ServerFacts>;
  /** one metrics scrape, or undefined when the server has none */
  readMetrics?(target: HttpTarget, facts: ServerFacts): Promise<MetricsSample | undefined>;
  /** token count of a text through the server's tokenizer, or undefined when it has none */
  countTokens?(target: HttpTarget, facts: ServerFacts, text: string, endpoint: EndpointKind): Promise<number | undefined>;
  /** ask the server to abort a request, where the engine has a call for it */
  abort?(target: HttpTarget, requestId: string): Promise<void>;
  /**
   * the probe's facts settled by the server's own command line, where its endpoints leave them
   * open (llama.cpp: whether its slots share one KV cache); offered for a server on this machine
   * (matrix/open.ts), read only where the adapter needs it. Undefined changes nothing.
   */
  factsFromCommandLine?(readServer: ReadServerProcess, facts: ServerFacts): Promise<ServerFacts | undefined>;
  /**
   * what a failed request's message means on this engine and what to do, to follow the server's own
   * words (llama.cpp's "Context size has been exceeded."); undefined where it adds nothing
   */
  explainError?(message: string, facts: ServerFacts): string | undefined;
}
