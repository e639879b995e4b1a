/**
 * The simulator's fault rates and wire knobs (a profile's `faults` and `wire`), their defaults, and
 * the checks that name a wrong one and its fix.
 */

/** Fault rates applied to every request (0..1 each), drawn from a PRNG seeded by `seed`. */
export interface SimFaultRates {
  http500Rate: number;
  http429Rate: number;
  http503Rate: number;
  /** a 429 answer carries `Retry-After: <this many seconds>` (0: no Retry-After header) */
  retryAfterS: number;
  /** a stream goes silent for `stallMs` after `faultAfterTokens` tokens */
  stallRate: number;
  stallMs: number;
  /** an error event mid-stream (then [DONE]) */
  errorRate: number;
  /** the stream is closed without [DONE] */
  closeRate: number;
  /** the connection is closed before a byte of the answer (the request's resend draws the same) */
  closeBeforeRate: number;
  /** one chunk is not valid JSON */
  malformedRate: number;
  /** one chunk carries `hugeChunkBytes` of text */
  hugeChunkRate: number;
  hugeChunkBytes: number;
  /** response headers are delayed by `headersDelayMs` */
  headersDelayRate: number;
  headersDelayMs: number;
  /** the token index at which mid-stream faults strike */
  faultAfterTokens: number;
  /** the first this many completion requests the server receives draw no fault (a server that fails under load, not at start) */
  faultFreeRequests: number;
  /**
   * every usage the server reports says completion_tokens × this (total_tokens to match): 2 = a
   * server whose usage claims twice the tokens it streamed; 1 = honest. Not a rate: every request.
   */
  usageFactor: number;
  /**
   * a metrics scrape reads 0 running and 0 waiting whatever the engine holds (a gauge read wrong:
   * issue 60's llama.cpp fork), at this rate per scrape; the counters stay right
   */
  metricsZeroRate: number;
  /** a metrics scrape is answered `metricsDelayMs` late (a scrape starved by the server), at this rate per scrape */
  metricsDelayRate: number;
  metricsDelayMs: number;
}

/**
 * Wire behaviours of a server with none of the extras (issue 18; the `bare` personality has them
 * all). Each one can be set alone on any personality through the profile's `wire`; an unset knob
 * keeps the personality's own behaviour (surface.ts).
 */
export interface SimWireKnobs {
  /**
   * streamed responses go out as `HTTP/1.0 200 OK` without Content-Length or chunked encoding:
   * the body ends when the server closes the connection (a Python http.server stack)
   */
  closeDelimited: boolean;
  /** the stream's last bytes are `data: [DONE]` with no blank line (no newline at all) after them */
  unterminatedLastEvent: boolean;
  /** non-final chunks carry `"finish_reason":"null"`, the string */
  stringNullFinish: boolean;
  /**
   * tokens per chunk, [min, max]: each chunk holds tokens back until it has a count drawn from the
   * request's seed (deterministic per request); the last chunk takes what is left. [1, 1] = one
   * chunk per engine emission.
   */
  tokensPerChunk: readonly [number, number];
  /** no usage anywhere in a stream, even with `stream_options.include_usage` */
  noStreamUsage: boolean;
  /** every usage block is `{"prompt_tokens":100,"completion_tokens":100,"total_tokens":200}`, whatever was generated */
  constantUsage: boolean;
  /** no metrics endpoint (`/metrics`, TRT-LLM's `/prometheus/metrics`): 404 */
  noMetrics: boolean;
  /** no tokenize or detokenize endpoint: 404 */
  noTokenize: boolean;
  /** `GET /api/version` answers as Ollama's does (with `GET /api/tags`, enough to look like Ollama to a detector) */
  ollamaVersion: boolean;
  /** `/v1/models` owned_by says this (a gateway relaying its upstream's); unset = the personality's */
  ownedBy: string;
  /**
   * request fields outside the standard OpenAI ones are a 400 naming the field ("Unrecognized
   * request argument supplied", as OpenAI's own API and strict gateways answer)
   */
  strictFields: boolean;
  /**
   * requests must carry `Authorization: Bearer <apiKey>` (a server started with `--api-key`), else
   * 401, with each engine's open paths and 401 body (server.ts keyGuarded; docs/simulator.md)
   */
  apiKey?: string;
  /**
   * for this many milliseconds after the server starts, every path but `/_sim/*` answers 503
   * "Loading model", as llama.cpp's server does while it loads its model (server.ts)
   */
  loadingMs?: number;
  /** generate this many times the max_tokens asked (a server that ignores the cap; issue 60); 1 = honours it */
  maxTokensFactor?: number;
  /**
   * response headers go out when a streamed request arrives, before the engine admits it (an HTTP
   * layer that accepts every stream at once, as vLLM's does), or with its first token (false);
   * unset = the personality's own
   */
  headersFirst?: boolean;
  /**
   * a polled stream (issue 60: an HTTP layer of its own that polls the engine): every `pollMs` the
   * tokens generated since the last poll go out as one chunk, so chunks carry several tokens and
   * the stream's times are the polls'; the request's finish goes out at the poll after it
   */
  pollMs?: number;
  /**
   * with pollMs: the first poll comes this many ms after the request arrived (default pollMs), so
   * its first chunk carries every token generated before it (a backlog, as a poller that starts
   * late sends)
   */
  firstPollMs?: number;
}

export const SIM_WIRE_KNOBS: readonly (keyof SimWireKnobs)[] = [
  'closeDelimited',
  'unterminatedLastEvent',
  'stringNullFinish',
  'tokensPerChunk',
  'noStreamUsage',
  'constantUsage',
  'noMetrics',
  'noTokenize',
  'ollamaVersion',
  'ownedBy',
  'strictFields',
  'apiKey',
  'loadingMs',
  'maxTokensFactor',
  'headersFirst',
  'pollMs',
  'firstPollMs',
];

export const NO_FAULTS: SimFaultRates = {
  http500Rate: 0,
  http429Rate: 0,
  http503Rate: 0,
  retryAfterS: 0,
  stallRate: 0,
  stallMs: 2000,
  errorRate: 0,
  closeRate: 0,
  closeBeforeRate: 0,
  malformedRate: 0,
  hugeChunkRate: 0,
  hugeChunkBytes: 1 << 20,
  headersDelayRate: 0,
  headersDelayMs: 500,
  faultAfterTokens: 5,
  faultFreeRequests: 0,
  usageFactor: 1,
  metricsZeroRate: 0,
  metricsDelayRate: 0,
  metricsDelayMs: 300,
};

/** Throws naming the field and the fix when an overridden fault is unknown (it would never be injected) or not a number. */
export function checkFaults(faults: Partial<SimFaultRates> | undefined): void {
  if (faults === undefined) return;
  if (faults === null || typeof faults !== 'object' || Array.isArray(faults)) throw new Error(`sim profile field faults must be an object of fault rates (${Object.keys(NO_FAULTS).join(', ')})`);
  for (const [key, value] of Object.entries(faults)) {
    if (value === undefined) continue;
    if (!Object.hasOwn(NO_FAULTS, key)) throw new Error(`sim fault "${key}" is unknown: use one of ${Object.keys(NO_FAULTS).join(', ')}`);
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new Error(`sim fault ${key} = ${JSON.stringify(value)} is invalid: it must be a number ≥ 0`);
  }
}

/** Throws naming the knob and the fix when a wire knob is unknown or of the wrong type. */
export function checkWire(wire: Partial<SimWireKnobs>): void {
  if (wire === null || typeof wire !== 'object' || Array.isArray(wire)) {
    throw new Error(`sim profile field wire must be an object of wire knobs (${SIM_WIRE_KNOBS.join(', ')})`);
  }
  if (wire.firstPollMs !== undefined && wire.pollMs === undefined) throw new Error('sim wire knob firstPollMs needs pollMs: give pollMs too (the period of the polls after the first)');
  for (const [key, value] of Object.entries(wire)) {
    if (!(SIM_WIRE_KNOBS as readonly string[]).includes(key)) {
      throw new Error(`sim wire knob "${key}" is unknown: use one of ${SIM_WIRE_KNOBS.join(', ')}`);
    }
    if (value === undefined) continue;
    if (key === 'tokensPerChunk') {
      const ok = Array.isArray(value) && value.length === 2 && value.every((n) => Number.isInteger(n) && n >= 1) && value[0] <= value[1];
      if (!ok) throw new Error(`sim wire knob tokensPerChunk = ${JSON.stringify(value)} is invalid: give [min, max], integers with 1 ≤ min ≤ max (e.g. [2, 4])`);
    } else if (key === 'pollMs' || key === 'firstPollMs') {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 1) throw new Error(`sim wire knob ${key} = ${JSON.stringify(value)} is invalid: give milliseconds, a number ≥ 1`);
    } else if (key === 'loadingMs') {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new Error(`sim wire knob loadingMs = ${JSON.stringify(value)} is invalid: give milliseconds, a number ≥ 0`);
    } else if (key === 'maxTokensFactor') {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 1) throw new Error(`sim wire knob maxTokensFactor = ${JSON.stringify(value)} is invalid: give a number ≥ 1 (1 honours max_tokens)`);
    } else if (key === 'ownedBy' || key === 'apiKey') {
      if (typeof value !== 'string' || value === '') throw new Error(`sim wire knob ${key} = ${JSON.stringify(value)} is invalid: give a non-empty string`);
    } else if (typeof value !== 'boolean') {
      throw new Error(`sim wire knob ${key} = ${JSON.stringify(value)} is invalid: it must be true or false`);
    }
  }
}
