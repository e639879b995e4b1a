/**
 * Warms the per-event code of a fresh thread (issue 24). A client thread is a new V8 isolate: its
 * first token events run the SSE parser, the sink, the decoder and the token counter as
 * interpreted code, several times slower than the compiled code every later event gets, and a
 * cell's first tokens all come in one burst (measured: a 16-stream cell's first tokens stamped
 * about 1 ms later on fresh threads than on the warm cell thread, later tokens not). Feeding the
 * same code a few thousand synthetic OpenAI-shaped chunks before the thread reports ready moves
 * it off the interpreter; nothing is sent, and the timeline it fills is thrown away.
 */
import type { DecodedChunk } from '../shapes/engine.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import { eventStreamSink } from './body-sink.js';
import { arrivalNow } from './arrival-clock.js';
import type { StreamRequestOptions } from './stream-options.js';

/** synthetic streams and chunks per stream: ~4,000 events, a few ms */
const STREAMS = 16;
const CHUNKS = 250;

function chunk(n: number): Buffer {
  return Buffer.from(
    `data: {"id":"warm","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"w "},"logprobs":null,"finish_reason":null}],` +
      `"usage":{"prompt_tokens":4,"total_tokens":${4 + n},"completion_tokens":${n}}}\n\n`,
  );
}

/** Runs `decode` (the adapter's) and the sink code on synthetic chunks; returns the events fed. */
export function warmClientCode(decode: (payload: unknown) => DecodedChunk, endsWithDone: boolean): number {
  const chunks = Array.from({ length: CHUNKS }, (_, i) => chunk(i + 1));
  let events = 0;
  for (let s = 0; s < STREAMS; s++) {
    const timeline: RequestTimeline = { id: `warm${s}`, sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0 };
    const opts = { id: timeline.id, decode, endsWithDone } as Pick<StreamRequestOptions, 'id' | 'decode' | 'endsWithDone'> as StreamRequestOptions;
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
