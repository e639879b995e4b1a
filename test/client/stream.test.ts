import net from 'node:net';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monoMs } from '../../src/clock.js';
import { ClientError } from '../../src/client/errors.js';
import { errorMessageFromBody, streamRequest, type StreamRequestOptions } from '../../src/client/stream.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { DONE, decodeOpenAi, ev, role, sleep, sseHead, startServer, text, withUsage, writeSlowly, type TestServer } from './helpers.js';

let server: TestServer;
let client: Client;
let n = 0;

beforeAll(async () => {
  server = await startServer();
  client = new Client(server.origin, { pipelining: 1 });
});
afterAll(async () => {
  await client.destroy();
  await server.close();
});

function run(path: string, extra: Partial<StreamRequestOptions> = {}): Promise<RequestTimeline> {
  return streamRequest({
    id: `req-${++n}`,
    dispatcher: client,
    origin: server.origin,
    path,
    body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] },
    decode: decodeOpenAi,
    endsWithDone: true,
    timeouts: { headersMs: 5_000, stallMs: 5_000 },
    ...extra,
  });
}

const sum = (a: number[]): number => a.reduce((x, y) => x + y, 0);

describe('streamRequest', () => {
  it('streams a normal response: headers, ids, timings, one token per chunk', async () => {
    server.on('/normal', async (_req, res) => {
      sseHead(res);
      await writeSlowly(res, [role(), text('Hel'), text('lo'), text('!'), ev({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }), DONE], 15);
    });
    let firstSeen: number | undefined;
    let ended = 0;
    const t = await run('/normal', {
      headers: { authorization: 'Bearer x' },
      onFirstToken: (tl) => (firstSeen = tl.firstTokenMs),
      onEnd: () => ended++,
    });
    expect(t.end?.kind).toBe('done');
    expect(t.ending).toBe('done');
    expect(t.chunkTokens).toEqual([1, 1, 1]);
    expect(t.tokenSource).toBe('chunks');
    expect(t.reasoningTokens).toBe(0);
    expect(t.firstTokenMs).toBe(t.chunkMs[0]);
    expect(firstSeen).toBe(t.firstTokenMs);
    expect(ended).toBe(1);
    expect(t.headersMs).toBeGreaterThanOrEqual(t.sendMs);
    expect(t.sentHeadersMs).toBeDefined();
    expect(t.sentHeadersMs!).toBeGreaterThanOrEqual(t.sendMs);
    expect(t.sentHeadersMs!).toBeLessThanOrEqual(t.headersMs!);
    // the role chunk is no token (3 text chunks → 3 entries); the first token follows the headers
    expect(t.firstTokenMs!).toBeGreaterThanOrEqual(t.headersMs!);
    for (let i = 1; i < t.chunkMs.length; i++) expect(t.chunkMs[i]!).toBeGreaterThanOrEqual(t.chunkMs[i - 1]!);
    expect(t.end!.atMs).toBeGreaterThanOrEqual(t.chunkMs[2]!);
    const seen = server.seen.find((s) => s.headers['x-request-id'] === t.id)!;
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers.accept).toBe('text/event-stream');
    expect(seen.headers.authorization).toBe('Bearer x');
    expect(JSON.parse(seen.body)).toEqual({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  });

  it('leaves sentHeadersMs unset when asked not to record it', async () => {
    const t = await run('/normal', { recordSentHeaders: false });
    expect(t.end?.kind).toBe('done');
    expect(t.sentHeadersMs).toBeUndefined();
  });

  it('gives every event of one socket read the same arrival time', async () => {
    server.on('/batched', (_req, res) => {
      sseHead(res);
      res.end(role() + text('a') + text('b') + text('c') + DONE);
    });
    const t = await run('/batched');
    expect(t.end?.kind).toBe('done');
    expect(t.chunkTokens).toEqual([1, 1, 1]);
    expect(new Set(t.chunkMs).size).toBe(1);
  });

  it('counts multi-token chunks from continuous usage; role and final usage chunks add nothing', async () => {
    server.on('/continuous', async (_req, res) => {
      sseHead(res);
      await writeSlowly(
        res,
        [
          role({ prompt_tokens: 50, completion_tokens: 0 }),
          withUsage('abc', 3, 50),
          withUsage('de', 5, 50),
          withUsage('fghi', 9, 50),
          ev({ choices: [{ index: 0, delta: {}, finish_reason: 'length' }], usage: { prompt_tokens: 50, completion_tokens: 9 } }),
          ev({ choices: [], usage: { prompt_tokens: 50, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 48 } } }),
          DONE,
        ],
        5,
      );
    });
    const t = await run('/continuous');
    expect(t.end?.kind).toBe('done');
    expect(t.chunkTokens).toEqual([3, 2, 4]);
    expect(t.tokenSource).toBe('usage');
    expect(t.completionTokens).toBe(9);
    expect(t.promptTokens).toBe(50);
    expect(t.cachedTokens).toBe(48);
  });

  it('a final usage-only chunk (no continuous usage) sets usage but adds no tokens', async () => {
    server.on('/final-usage', async (_req, res) => {
      sseHead(res);
      await writeSlowly(res, [role(), text('ab'), text('cd'), text('ef'), ev({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 6 } }), DONE], 5);
    });
    const t = await run('/final-usage');
    expect(t.end?.kind).toBe('done');
    expect(t.chunkTokens).toEqual([1, 1, 1]);
    expect(t.tokenSource).toBe('chunks');
    expect(t.completionTokens).toBe(6);
    expect(t.promptTokens).toBe(100);
  });

  it('all-zero usage on every chunk (Ollama) is not continuous usage; the last usage wins', async () => {
    server.on('/zero-usage', async (_req, res) => {
      sseHead(res);
      await writeSlowly(res, [withUsage('a', 0, 0), withUsage('b', 0, 0), ev({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2 } }), DONE], 5);
    });
    const t = await run('/zero-usage');
    expect(t.chunkTokens).toEqual([1, 1]);
    expect(t.tokenSource).toBe('chunks');
    expect(t.completionTokens).toBe(2);
    expect(t.promptTokens).toBe(7);
  });

  it('uses per-chunk token counts (token_ids) when given', async () => {
    server.on('/token-ids', async (_req, res) => {
      sseHead(res);
      await writeSlowly(res, [role(), text('abc', { token_ids: [1, 2, 3] }), text('d', { token_ids: [4] }), DONE], 5);
    });
    const t = await run('/token-ids');
    expect(t.chunkTokens).toEqual([3, 1]);
    expect(t.tokenSource).toBe('chunk-token-ids');
  });

  it('counts reasoning deltas (reasoning_content and reasoning) as tokens', async () => {
    server.on('/reasoning', async (_req, res) => {
      sseHead(res);
      await writeSlowly(
        res,
        [
          role(),
          ev({ choices: [{ index: 0, delta: { reasoning_content: 'think' } }] }),
          ev({ choices: [{ index: 0, delta: { reasoning_content: 'ing' } }] }),
          ev({ choices: [{ index: 0, delta: { reasoning: 'more' } }] }),
          text('answer'),
          text('!'),
          DONE,
        ],
        5,
      );
    });
    const t = await run('/reasoning');
    expect(t.end?.kind).toBe('done');
    expect(sum(Array.from(t.chunkTokens))).toBe(5);
    expect(t.reasoningTokens).toBe(3);
    expect(t.firstTokenMs).toBe(t.chunkMs[0]);
  });

  it('ends with error-event on an error object mid-stream and stops reading', async () => {
    server.on('/error-event', async (_req, res) => {
      sseHead(res);
      await writeSlowly(res, [role(), text('a'), ev({ error: { message: 'boom inside', code: 500 } }), text('never'), DONE], 5);
    });
    const t = await run('/error-event');
    expect(t.end?.kind).toBe('error');
    if (t.end?.kind !== 'error') return;
    expect(t.end.code).toBe('error-event');
    expect(t.end.message).toContain('boom inside');
    expect(t.chunkTokens).toEqual([1]);
  });

  it('ends with no-done when the stream closes without [DONE]', async () => {
    server.on('/eof', async (_req, res) => {
      sseHead(res);
      await writeSlowly(res, [role(), text('a'), text('b')], 5);
    });
    const t = await run('/eof');
    expect(t.end).toMatchObject({ kind: 'error', code: 'no-done' });
    expect(t.ending).toBeUndefined();
    expect(t.chunkTokens).toEqual([1, 1]);
  });

  it('ends normally on the engine final chunk when the stream has no [DONE]', async () => {
    server.on('/native', async (_req, res) => {
      sseHead(res);
      await writeSlowly(res, [ev({ content: 'x', choices: [{ delta: { content: 'x' } }] }), ev({ stop: true, choices: [] })], 5);
    });
    const t = await run('/native', { endsWithDone: false });
    expect(t.end?.kind).toBe('done');
    expect(t.ending).toBe('final-chunk');
    expect(t.chunkTokens).toEqual([1]);
    // the same stream with endsWithDone: a final chunk is not the end marker
    const t2 = await run('/native', { endsWithDone: true });
    expect(t2.end).toMatchObject({ kind: 'error', code: 'no-done' });
  });

  it('ends with protocol on unparseable data', async () => {
    server.on('/bad-json', (_req, res) => {
      sseHead(res);
      res.end(text('a') + 'data: {not json\n\n' + DONE);
    });
    const t = await run('/bad-json');
    expect(t.end).toMatchObject({ kind: 'error', code: 'protocol' });
  });

  it('ends with protocol on an event over the size cap', async () => {
    server.on('/huge', (_req, res) => {
      sseHead(res);
      res.end(`data: "${'x'.repeat(5000)}"\n\n` + DONE);
    });
    const t = await run('/huge', { maxEventBytes: 1024 });
    expect(t.end).toMatchObject({ kind: 'error', code: 'protocol' });
  });

  it('accepts TRT-LLM style trailing whitespace', async () => {
    server.on('/trt', (_req, res) => {
      sseHead(res);
      res.end(`data: ${JSON.stringify({ choices: [{ delta: { content: 'a' } }] })} \n\ndata: [DONE] \n\n`);
    });
    const t = await run('/trt');
    expect(t.end?.kind).toBe('done');
    expect(t.chunkTokens).toEqual([1]);
  });

  it('reports HTTP errors with the server message (nested, flat, string shapes)', async () => {
    server.on('/500', (_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'engine crashed', type: 'server_error' } }));
    });
    server.on('/400', (_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'error', message: "This model's maximum context length is 4096 tokens", type: 'BadRequestError' }));
    });
    server.on('/429', (_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'Model is overloaded', error_type: 'overloaded' }));
    });
    const t500 = await run('/500');
    expect(t500.end).toMatchObject({ kind: 'error', code: 'http-status', httpStatus: 500 });
    expect(t500.end?.kind === 'error' && t500.end.message).toContain('engine crashed');
    const t400 = await run('/400');
    expect(t400.end).toMatchObject({ kind: 'error', code: 'http-status', httpStatus: 400 });
    expect(t400.end?.kind === 'error' && t400.end.message).toContain('maximum context length is 4096');
    const t429 = await run('/429');
    // a 429 is its own kind (issue 60): the server's rate limit, not an error of the request
    expect(t429.end).toMatchObject({ kind: 'error', code: 'rate-limited', httpStatus: 429 });
    expect(t429.end?.kind === 'error' && t429.end.message).toContain('Model is overloaded');
    expect(t500.firstTokenMs).toBeUndefined();
  });

  it('bounds the error body it reads', async () => {
    server.on('/big-error', (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('e'.repeat(200_000));
    });
    const t = await run('/big-error', { maxErrorBodyBytes: 1000 });
    expect(t.end).toMatchObject({ kind: 'error', code: 'http-status', httpStatus: 503 });
    expect(t.end?.kind === 'error' && t.end.message.length).toBeLessThan(600);
  });

  it('ends with stall when no bytes come for stallMs, and destroys the body', async () => {
    server.on('/stall', (_req, res) => {
      sseHead(res);
      res.write(role() + text('a'));
      // then nothing
    });
    const t = await run('/stall', { timeouts: { headersMs: 5_000, stallMs: 300 } });
    expect(t.end).toMatchObject({ kind: 'error', code: 'stall' });
    expect(t.chunkTokens).toEqual([1]);
    expect(t.end!.atMs - t.chunkMs[0]!).toBeGreaterThanOrEqual(250);
    expect(t.end!.atMs - t.chunkMs[0]!).toBeLessThan(5_000);
  });

  it('ends with headers-timeout when the response headers never come', async () => {
    server.on('/no-headers', () => {
      // never answer
    });
    const t = await run('/no-headers', { timeouts: { headersMs: 300, stallMs: 5_000 } });
    expect(t.end).toMatchObject({ kind: 'error', code: 'headers-timeout' });
    expect(t.headersMs).toBeUndefined();
    expect(t.end!.atMs - t.sendMs).toBeGreaterThanOrEqual(250);
  });

  it('ends with aborted when the signal aborts mid-stream', async () => {
    server.on('/slow', async (_req, res) => {
      sseHead(res);
      await writeSlowly(res, [role(), ...Array.from({ length: 200 }, () => text('x')), DONE], 20);
    });
    const ac = new AbortController();
    const p = run('/slow', { signal: ac.signal, onFirstToken: () => setTimeout(() => ac.abort(), 60) });
    const t = await p;
    expect(t.end?.kind).toBe('aborted');
    expect(t.chunkTokens.length).toBeGreaterThanOrEqual(1);
    expect(t.chunkTokens.length).toBeLessThan(200);
    const abortedAt = t.end!.atMs;
    expect(abortedAt).toBeGreaterThanOrEqual(t.firstTokenMs!);
  });

  it('ends with aborted when the signal aborts before headers, or was aborted already', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const t = await run('/no-headers', { signal: ac.signal });
    expect(t.end?.kind).toBe('aborted');
    const t2 = await run('/normal', { signal: AbortSignal.abort() });
    expect(t2.end?.kind).toBe('aborted');
  });

  it('reuses the connection after [DONE] and after an HTTP error; opens a new one after an abort', async () => {
    const srv = await startServer();
    srv.on('/done', (_req, res) => {
      sseHead(res);
      res.end(role() + text('a') + DONE);
    });
    srv.on('/busy', (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"overloaded"}}');
    });
    // an error body of exactly the read limit is complete: no reason to drop the connection
    srv.on('/busy-at-limit', (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('x'.repeat(16));
    });
    srv.on('/slow', async (_req, res) => {
      sseHead(res);
      await writeSlowly(res, [role(), ...Array.from({ length: 100 }, () => text('x')), DONE], 20);
    });
    const c = new Client(srv.origin, { pipelining: 1 });
    const go = (path: string, signal?: AbortSignal): Promise<RequestTimeline> =>
      streamRequest({
        maxErrorBodyBytes: 16,
        id: `reuse-${++n}`,
        dispatcher: c,
        origin: srv.origin,
        path,
        body: {},
        decode: decodeOpenAi,
        endsWithDone: true,
        signal,
        timeouts: { headersMs: 5_000, stallMs: 5_000 },
      });
    try {
      expect((await go('/done')).end?.kind).toBe('done');
      expect((await go('/done')).end?.kind).toBe('done');
      expect((await go('/busy')).end).toMatchObject({ kind: 'error', code: 'http-status', httpStatus: 503 });
      expect((await go('/done')).end?.kind).toBe('done');
      expect((await go('/busy-at-limit')).end).toMatchObject({ kind: 'error', code: 'http-status', message: `HTTP 500: ${'x'.repeat(16)}` });
      expect((await go('/done')).end?.kind).toBe('done');
      expect(srv.connections).toBe(1);
      const ac = new AbortController();
      const aborted = go('/slow', ac.signal);
      setTimeout(() => ac.abort(), 80);
      expect((await aborted).end?.kind).toBe('aborted');
      const after = await go('/done');
      expect(after.end?.kind).toBe('done');
      expect(after.chunkTokens).toEqual([1]);
      expect(srv.connections).toBe(2);
    } finally {
      await c.destroy();
      await srv.close();
    }
  });

  it('an abort from inside a callback ends the timeline there: the rest of that read is not counted', async () => {
    server.on('/burst', async (_req, res) => {
      sseHead(res);
      res.write(role() + text('a') + text('b') + text('c'));
      await sleep(200);
      if (!res.destroyed) res.end(DONE);
    });
    const ac = new AbortController();
    let chunksAtEnd = -1;
    const t = await run('/burst', {
      signal: ac.signal,
      onFirstToken: () => ac.abort(),
      onEnd: (tl) => {
        chunksAtEnd = tl.chunkTokens.length;
      },
    });
    expect(t.end?.kind).toBe('aborted');
    expect(chunksAtEnd).toBe(1);
    expect(t.chunkTokens).toEqual([1]);
  });

  it('ends with connect when nothing listens', async () => {
    const tmp = net.createServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', () => r()));
    const port = (tmp.address() as net.AddressInfo).port;
    await new Promise<void>((r) => tmp.close(() => r()));
    const c = new Client(`http://127.0.0.1:${port}`);
    const t = await streamRequest({
      id: 'refused',
      dispatcher: c,
      origin: `http://127.0.0.1:${port}`,
      path: '/v1/chat/completions',
      body: {},
      decode: decodeOpenAi,
      endsWithDone: true,
      timeouts: { headersMs: 1000, stallMs: 1000 },
    });
    await c.destroy();
    expect(t.end).toMatchObject({ kind: 'error', code: 'connect' });
  });

  it('ends with socket when the server resets the connection mid-stream', async () => {
    server.on('/reset', async (_req, res) => {
      sseHead(res);
      res.write(text('a'));
      await sleep(20);
      res.socket?.destroy();
    });
    const t = await run('/reset');
    expect(t.end?.kind).toBe('error');
    // undici reports a closed socket mid-body as a socket error
    expect(t.end?.kind === 'error' && t.end.code).toBe('socket');
  });

  it('rejects invalid options with a ClientError naming the field', async () => {
    await expect(run('no-slash')).rejects.toBeInstanceOf(ClientError);
    await expect(run('/x', { timeouts: { headersMs: -1, stallMs: 1 } })).rejects.toThrow(/timeouts\.headersMs/);
  });

  it('takes arrival timestamps before parsing (first token time within the read)', async () => {
    server.on('/timed', async (_req, res) => {
      sseHead(res);
      await sleep(30);
      res.write(text('a'));
      await sleep(150);
      res.end(text('b') + DONE);
    });
    const before = monoMs();
    const t = await run('/timed');
    expect(t.firstTokenMs! - before).toBeGreaterThanOrEqual(25);
    expect(t.chunkMs[1]! - t.chunkMs[0]!).toBeGreaterThanOrEqual(50);
  });
});

describe('errorMessageFromBody', () => {
  it('reads the known error shapes', () => {
    expect(errorMessageFromBody('{"error":{"message":"a","type":"x"}}')).toBe('a');
    expect(errorMessageFromBody('{"object":"error","message":"b"}')).toBe('b');
    expect(errorMessageFromBody('{"error":"c","error_type":"validation"}')).toBe('c');
    expect(errorMessageFromBody('{"detail":"d"}')).toBe('d');
    expect(errorMessageFromBody('plain text\n')).toBe('plain text');
    expect(errorMessageFromBody('')).toBe('');
    expect(errorMessageFromBody('x'.repeat(1000)).length).toBe(501);
  });
});
