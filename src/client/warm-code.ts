/**
 * Warms the per-event code of a fresh thread (issue 24). A client thread is a new V8 isolate: its
 * first token events run the SSE parser, the sink, the decoder and the token counter as
 * interpreted code, several times slower than the compiled code every later event gets, and a
 * cell's first tokens all come in one burst (measured: a 16-stream cell's first tokens stamped
 * about 1 ms later on fresh threads than on the warm cell thread, later tokens not). Feeding the
 * same code a few thousand synthetic OpenAI-shaped chunks before the thread reports ready moves
 * it off the interpreter (the adapter's scan of the bytes where it has one, and its decoder);
 * nothing is sent, and the timeline it fills is thrown away.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import { eventStreamSink } from './body-sink.js';
import { arrivalNow } from './arrival-clock.js';
import type { StreamRequestOptions } from './stream-options.js';

/** synthetic streams and chunks per stream: ~4,000 events, a few ms */
const STREAMS = 16;
const CHUNKS = 250;

/**
 * Token chunk n. Every 4th has a key of its own, so a scan meets a shape it has not seen and walks
 * the whole grammar (client/json-scan.ts): a server's first chunks (its role chunk, its first token
 * chunk) are new shapes too, and they come in the cell's first-token burst.
 */
function chunk(n: number, stream: number): Buffer {
  const own = n % 4 === 0 ? `"warm${stream}_${n}":${n},` : '';
  return Buffer.from(
    `data: {${own}"id":"warm","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"w "},"logprobs":null,"finish_reason":null}],` +
      `"usage":{"prompt_tokens":4,"total_tokens":${4 + n},"completion_tokens":${n}}}\n\n`,
  );
}

/** Runs the adapter's reading (`decode`, and `scan` where given) and the sink code on synthetic chunks; returns the events fed. */
export function warmClientCode(reading: Pick<StreamRequestOptions, 'decode' | 'scan' | 'endsWithDone'>): number {
  let events = 0;
  for (let s = 0; s < STREAMS; s++) {
    const chunks = Array.from({ length: CHUNKS }, (_, i) => chunk(i + 1, s));
    const timeline: RequestTimeline = { id: `warm${s}`, sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0 };
    // most streams by the scan (a cell's path), a quarter by JSON.parse and decode (the path of a
    // chunk the scan does not read, and of an adapter without one)
    const scan = s % 4 !== 3 ? reading.scan : undefined;
    const opts = { id: timeline.id, decode: reading.decode, endsWithDone: reading.endsWithDone, ...(scan ? { scan } : {}) } as Pick<
      StreamRequestOptions,
      'id' | 'decode' | 'scan' | 'endsWithDone'
    > as StreamRequestOptions;
    const sink = eventStreamSink(timeline, opts, 'text/event-stream', () => undefined, () => undefined);
    for (const c of chunks) {
      sink.data(c);
      events++;
    }
    sink.stop();
  }
  arrivalNow();
  return events;
}
