/**
 * What the runners need to talk to one server: where it is, which adapter speaks to it, what the
 * probe found, and the request settings of the run.
 */
import type { DecodedChunk, EndpointKind, EngineAdapter, HttpTarget, MetricsSample, ServerFacts } from '../shapes/engine.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { ChatMessage, WorkloadRequest } from '../shapes/workload.js';
import { setMaxListeners } from 'node:events';
import { monoMs } from '../clock.js';
import type { ConnectionPolicy } from '../client/connections.js';
import { streamRequest, type StreamRequestOptions } from '../client/stream.js';
import { compactTimeline } from '../client/compact.js';
import { redactSecrets, redactValues } from '../redact.js';
import type { LocalTokenizer } from '../tokenizer/local.js';
import { recountChunkTokens } from '../tokenizer/recount.js';

export interface LoadSession {
  target: HttpTarget;
  adapter: EngineAdapter;
  facts: ServerFacts;
  model: string;
  endpoint: EndpointKind;
  maxOutputTokens: number;
  /** request timeouts, and how long setup calls wait for a server that does not answer */
  timeouts: { headersMs: number; stallMs: number; unreachableRetryMs: number };
  /** unique per run: request ids and cold-prefill prefixes derive from it */
  runId: string;
  /** what the run has learned about the server's connections (closes after each response?) */
  connections: ConnectionPolicy;
  /**
   * the server answered a metrics scrape when the run opened: from then on a failed scrape is a
   * failed scrape (unknown), never "a server without metrics" (idle, queue empty)
   */
  hasMetrics: boolean;
  /** set by the drain barrier when the server stopped answering (load/drain.ts); cleared when it answers again */
  serverDown?: { sinceEpochMs: number; reason: string };
  /**
   * the last cell's requests all went unanswered (no response headers: metrics/no-response.ts), so
   * the next cell's readiness gate waits SILENT_GATE_MS at most, not its full timeout; cleared by a
   * cell whose server answered
   */
  answeredNothing?: boolean;
  /**
   * the local tokenizer (target.tokenizer / LLM_BENCH_TOKENIZER): requests whose tokens would come
   * from chunks are recounted from their text (tokenSource local-tokenizer), and prompts are sized
   * with it when the server has no tokenize endpoint
   */
  localTokenizer?: LocalTokenizer;
}

/** Headers sent with every load request (the API key travels here only). */
export function requestHeaders(session: LoadSession): Record<string, string> {
  return session.target.apiKey ? { authorization: `Bearer ${session.target.apiKey}` } : {};
}

/** One metrics scrape, or undefined when the server has no metrics or the scrape failed. */
export async function scrapeMetrics(session: LoadSession): Promise<MetricsSample | undefined> {
  if (!session.adapter.readMetrics) return undefined;
  try {
    return await session.adapter.readMetrics(session.target, session.facts);
  } catch {
    return undefined;
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** one turn of the event loop, after its pending I/O */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves at `dueMs` (monoMs), not before (or when the signal aborts): a timer wakes the loop
 * about 1 ms early (timers have 1 ms steps and may round down: a 1,000 ms window slept with one
 * read 999.1-999.6 ms); the last fraction is waited out turn by turn of the event loop, so I/O
 * still runs between turns.
 */
export async function waitUntil(dueMs: number, signal: AbortSignal): Promise<void> {
  const early = dueMs - monoMs();
  if (early >= 2) await sleep(early - 1, signal);
  while (!signal.aborted && dueMs - monoMs() > 0) await nextTurn();
}

export interface SendOptions {
  id: string;
  prompt: string;
  /** chat: the messages to send instead of one user message of `prompt` (workloads) */
  messages?: ChatMessage[];
  maxTokens: number;
  /** the prompt tokens the workload built it to have (kept on the timeline as plannedPromptTokens) */
  plannedPromptTokens?: number;
  /** the connection it goes on (one undici Client of the pool) */
  dispatcher: StreamRequestOptions['dispatcher'];
  signal?: AbortSignal;
  onFirstToken?: () => void;
  /** sees every decoded chunk, its text included (a conversation's reply) */
  onChunk?: (chunk: DecodedChunk) => void;
  /** the response ended and its connection closes: open the worker's next one now */
  onConnectionClosing?: () => void;
}

const recounters = new WeakMap<LocalTokenizer, (texts: readonly string[]) => number[]>();

/** an adapter's two readings of a chunk, as the client takes them */
type Readings = Pick<StreamRequestOptions, 'decode' | 'scan'>;
const readingsOf = new WeakMap<EngineAdapter, Readings>();

/**
 * The adapter's readings, made once per adapter: a request's per-event path then meets the same
 * two functions every time, warm in the cache (a new pair per request was one more object a token
 * event touched at 1,024 streams). With onChunk (a conversation's reply) a request has its own,
 * which read the text.
 */
function readings(adapter: EngineAdapter, onChunk?: (chunk: DecodedChunk) => void): Readings {
  const scan = adapter.scanChunk;
  if (onChunk) {
    return {
      decode: (p) => {
        const d = adapter.decodeChunk(p);
        onChunk(d);
        return d;
      },
      ...(scan === undefined
        ? {}
        : {
            scan: (b, s, e) => {
              const d = scan.call(adapter, b, s, e, true);
              if (d !== undefined) onChunk(d);
              return d;
            },
          }),
    };
  }
  let r = readingsOf.get(adapter);
  if (!r) {
    // the adapter's methods as they are at each call (a test may swap one after the first request)
    r = { decode: (p) => adapter.decodeChunk(p), ...(scan === undefined ? {} : { scan: (b, s, e, wantText) => adapter.scanChunk!(b, s, e, wantText) }) };
    readingsOf.set(adapter, r);
  }
  return r;
}

/** The per-chunk recount of a local tokenizer (one function per tokenizer). */
function recounter(tokenizer: LocalTokenizer): (texts: readonly string[]) => number[] {
  let f = recounters.get(tokenizer);
  if (!f) {
    const count = (text: string): number => tokenizer.count(text);
    f = (texts) => recountChunkTokens(count, texts);
    recounters.set(tokenizer, f);
  }
  return f;
}

/** Shape one request through the session's adapter and stream it; never rejects (failures are data). */
export function sendRequest(session: LoadSession, o: SendOptions): Promise<RequestTimeline> {
  const req = session.adapter.buildStreamRequest({
    model: session.model,
    endpoint: session.endpoint,
    prompt: o.prompt,
    ...(o.messages ? { messages: o.messages } : {}),
    maxTokens: o.maxTokens,
    forceLength: true,
    requestId: o.id,
  });
  const timeline = streamRequest({
    id: o.id,
    dispatcher: o.dispatcher,
    // the base URL, a gateway's path prefix included (streamRequest keeps it in front of the path)
    origin: session.target.baseUrl,
    path: req.path,
    headers: requestHeaders(session),
    body: req.body,
    // decodeChunk, and scanChunk: a token event read from its bytes
    ...readings(session.adapter, o.onChunk),
    endsWithDone: session.adapter.endsWithDone,
    ...(o.signal ? { signal: o.signal } : {}),
    timeouts: session.timeouts,
    connections: session.connections,
    ...(o.onFirstToken ? { onFirstToken: o.onFirstToken } : {}),
    ...(o.onConnectionClosing ? { onConnectionClosing: o.onConnectionClosing } : {}),
    ...(session.localTokenizer ? { recountTokens: recounter(session.localTokenizer) } : {}),
  });
  // A server's error text is stored (evidence, prefill rows, progress lines, JUnit): a server that
  // echoes the API key, or a secret-named flag, must not carry it there.
  return timeline.then((t) => {
    // ended: its chunk arrays become typed arrays of their exact length (10 B a chunk)
    compactTimeline(t);
    if (o.plannedPromptTokens !== undefined) t.plannedPromptTokens = o.plannedPromptTokens;
    t.askedMaxTokens = o.maxTokens;
    if (t.end?.kind === 'error') {
      const meaning = session.adapter.explainError?.(t.end.message, session.facts);
      t.end.message = redactValues(redactSecrets(meaning === undefined ? t.end.message : `${t.end.message} (${meaning})`), [session.target.apiKey]);
    }
    if (t.retriedAfter !== undefined) t.retriedAfter = redactValues(redactSecrets(t.retriedAfter), [session.target.apiKey]);
    return t;
  });
}

/**
 * The engine's own abort call (SGLang POST /abort_request) for requests `ids`, so the server stops
 * them now rather than when it notices their closed connections; nothing where the engine has none.
 */
export function abortOnServer(session: LoadSession, ids: readonly string[]): Promise<unknown> {
  if (!session.adapter.abort || ids.length === 0) return Promise.resolve();
  return Promise.allSettled(ids.map((id) => session.adapter.abort!(session.target, id)));
}

/**
 * The abort of one cell: aborted when `outer` is (test timeout, Ctrl-C) and by the runner at the
 * window's end. Every request of the cell listens on it (many listeners are expected, not a leak).
 * `dispose` stops listening on `outer` (call it when the cell is done).
 */
export function cellAbortOf(outer?: AbortSignal): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const onOuterAbort = () => controller.abort();
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  // an abort that came before the listener (during the drain barrier or preconnect)
  if (outer?.aborted) controller.abort();
  return { controller, dispose: () => outer?.removeEventListener('abort', onOuterAbort) };
}

/**
 * The server's metrics scraped every `intervalMs` from `fromMs` until `untilMs` (monoMs), each
 * sample with the client's in-flight count at that moment; a scrape answered after `untilMs` is
 * not kept. Ends after the scrape in progress when `stopped()` or the signal says so.
 */
export async function sampleMetrics(
  session: LoadSession,
  o: { fromMs: number; untilMs: number; intervalMs: number; inFlight: () => number; signal: AbortSignal; stopped?: () => boolean },
): Promise<MetricsSample[]> {
  const samples: MetricsSample[] = [];
  await sleep(o.fromMs - monoMs(), o.signal);
  for (let next = o.fromMs; !o.stopped?.() && !o.signal.aborted && next < o.untilMs; ) {
    // the client's count before and after the scrape, the lower: a request sent on the scrape's own
    // tick is in flight for the client before the server has read it (a fixed think time lines the
    // two up), which would read as a request the server holds back
    const before = o.inFlight();
    const sentMs = monoMs();
    const s = await scrapeMetrics(session);
    const scrapeMs = monoMs() - sentMs;
    const clientInFlight = Math.min(before, o.inFlight());
    // a scrape answered after the window may have read a server the load had already left (its
    // workers stop at the window's end): a scrape that waited for one of llama.cpp's HTTP threads,
    // sent before the end and answered after it, read 0 running with 0 in flight
    if (s && monoMs() <= o.untilMs) samples.push({ ...s, clientInFlight, scrapeMs });
    next += o.intervalMs;
    await sleep(Math.min(next, o.untilMs) - monoMs(), o.signal);
  }
  return samples;
}

/**
 * A runner's request as its caller gives it: a prompt text (the synthetic workload: the run's max
 * output tokens) or a workload's request (its own messages and output cap).
 */
export type CellRequestInput = string | WorkloadRequest;

/** The request to send for a caller's input; `maxTokens` when it is a bare prompt. */
export function requestOf(input: CellRequestInput, maxTokens: number): WorkloadRequest {
  return typeof input === 'string' ? { prompt: input, maxTokens } : input;
}

/** The send options of a runner's request: its prompt, messages, output cap and planned prompt tokens. */
export function requestBody(r: WorkloadRequest): Pick<SendOptions, 'prompt' | 'messages' | 'maxTokens' | 'plannedPromptTokens'> {
  return {
    prompt: r.prompt,
    ...(r.messages ? { messages: r.messages } : {}),
    maxTokens: r.maxTokens,
    ...(r.promptTokens !== undefined ? { plannedPromptTokens: r.promptTokens } : {}),
  };
}
