/**
 * The `bare` personality (issue 18): an OpenAI-compatible server with none of the extras, read
 * byte for byte with raw sockets and fetch (not through the project's streaming client), and
 * each of its wire knobs turned on alone on another personality.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveSimProfile, startSim, type SimHandle, type SimProfileOverrides } from '../../src/sim/index.js';
import { countTokens } from '../../src/sim/tokenizer.js';

const messages = [{ role: 'user', content: 'The quick brown fox jumps over the lazy dog' }];
const prompt = 'The quick brown fox jumps over the lazy dog';
const FAST = { stepBaseMs: 2, eosProbability: 0 };

interface RawResponse {
  /** everything the server sent, as bytes (latin1 keeps them one to one) */
  bytes: string;
  statusLine: string;
  headers: Record<string, string>;
  body: string;
  /** the server ended the connection (FIN), which is the end of a close-delimited body */
  closedByServer: boolean;
}

/** One request on a fresh TCP connection, written by hand; reads until the server closes (or `timeoutMs`). */
function rawRequest(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 5000): Promise<RawResponse> {
  const u = new URL(url);
  const payload = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let closedByServer = false;
    const s = connect(Number(u.port), u.hostname, () => {
      const extra = Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      s.write(`${method} ${path} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n${extra}\r\n${payload}`);
    });
    const timer = setTimeout(() => s.destroy(), timeoutMs);
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('end', () => {
      closedByServer = true;
    });
    s.on('error', reject);
    s.on('close', () => {
      clearTimeout(timer);
      const bytes = Buffer.concat(chunks).toString('latin1');
      const split = bytes.indexOf('\r\n\r\n');
      const head = split < 0 ? bytes : bytes.slice(0, split);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const hs: Record<string, string> = {};
      for (const l of lines) {
        const c = l.indexOf(':');
        if (c > 0) hs[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
      }
      resolve({ bytes, statusLine, headers: hs, body: split < 0 ? '' : Buffer.from(bytes.slice(split + 4), 'latin1').toString('utf8'), closedByServer });
    });
  });
}

/** The `data:` payloads of a body, split on blank lines; the last one may be unterminated. */
function dataEvents(body: string): string[] {
  return body
    .split('\n\n')
    .filter((e) => e.length > 0)
    .map((e) => {
      expect(e.startsWith('data: '), `event ${JSON.stringify(e.slice(0, 40))}`).toBe(true);
      return e.slice(6);
    });
}

function chunksOf(body: string): Record<string, any>[] {
  return dataEvents(body)
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as Record<string, any>);
}

const textOf = (j: Record<string, any>): string => (j.choices?.[0]?.delta?.content ?? '') + (j.choices?.[0]?.text ?? '');

async function truthOf(sim: SimHandle, id: string): Promise<{ tokens: [number, number][]; completionTokens: number; admittedMs: number; endMs: number; end: string }> {
  const r = await fetch(`${sim.url}/_sim/truth/${id}`);
  expect(r.status).toBe(200);
  return (await r.json()) as never;
}

const sims: SimHandle[] = [];
async function sim(personality: 'bare' | 'vllm' | 'llamacpp', overrides: SimProfileOverrides = {}): Promise<SimHandle> {
  const s = await startSim({ profile: personality === 'bare' ? 'bare' : 'tiny', personality, overrides: { ...FAST, ...overrides } });
  sims.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(sims.map((s) => s.close()));
});

describe('bare personality on the wire', () => {
  let bare: SimHandle;
  beforeAll(async () => {
    bare = await sim('bare');
  });

  test.each(['chat', 'completions'] as const)('%s stream: HTTP/1.0, close-delimited, "null" finishes, several tokens per chunk, no usage, unterminated [DONE]', async (kind) => {
    const id = `bare-${kind}`;
    const path = kind === 'chat' ? '/v1/chat/completions' : '/v1/completions';
    const body = { model: 'anything', max_tokens: 17, stream: true, stream_options: { include_usage: true }, ...(kind === 'chat' ? { messages } : { prompt }) };
    const r = await rawRequest(bare.url, 'POST', path, body, { 'X-Request-Id': id });
    expect(r.statusLine).toBe('HTTP/1.0 200 OK');
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.headers['content-length']).toBeUndefined();
    expect(r.headers['transfer-encoding']).toBeUndefined();
    expect(r.headers.connection).toBeUndefined();
    // the body ends with the close, and its last bytes are the unterminated end marker
    expect(r.closedByServer).toBe(true);
    expect(r.bytes.endsWith('}\n\ndata: [DONE]')).toBe(true);
    expect(r.body).not.toContain('"usage"');

    const chunks = chunksOf(r.body);
    const finishes = chunks.map((j) => j.choices[0].finish_reason);
    expect(finishes.slice(0, -1).every((f) => f === 'null')).toBe(true);
    expect(finishes.at(-1)).toBe('length');
    // no role chunk; the finishing chunk has no text
    expect(textOf(chunks[0]!)).not.toBe('');
    expect(textOf(chunks.at(-1)!)).toBe('');

    // ground truth: the text chunks carry what the sim recorded, 2–4 tokens each (the last takes what is left)
    const truth = await truthOf(bare, id);
    expect(truth.end).toBe('done');
    expect(truth.completionTokens).toBe(17);
    const counts = truth.tokens.map(([, n]) => n);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(17);
    for (const n of counts.slice(0, -1)) expect(n === 2 || n === 3 || n === 4, `chunk sizes ${counts.join(',')}`).toBe(true);
    expect(counts.at(-1)!).toBeLessThanOrEqual(4);
    expect(counts.some((n) => n > 1)).toBe(true);
    const textChunks = chunks.filter((j) => textOf(j) !== '');
    expect(textChunks.map((j) => countTokens(textOf(j)))).toEqual(counts);
    expect(countTokens(textChunks.map(textOf).join(''))).toBe(truth.completionTokens);
  });

  test('chunk sizes are the same for the same request (deterministic per request)', async () => {
    const body = { messages, max_tokens: 20, stream: true };
    const a = await startSim({ profile: 'bare', overrides: FAST });
    const b = await startSim({ profile: 'bare', overrides: FAST });
    try {
      await rawRequest(a.url, 'POST', '/v1/chat/completions', body, { 'X-Request-Id': 'same' });
      await rawRequest(b.url, 'POST', '/v1/chat/completions', body, { 'X-Request-Id': 'same' });
      const ta = (await truthOf(a, 'same')).tokens.map(([, n]) => n);
      const tb = (await truthOf(b, 'same')).tokens.map(([, n]) => n);
      expect(ta).toEqual(tb);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('fetch reads the close-delimited stream to its unterminated end', async () => {
    const r = await fetch(`${bare.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages, max_tokens: 5, stream: true }) });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text.endsWith('\n\ndata: [DONE]')).toBe(true);
    expect(chunksOf(text).at(-1)!.choices[0].finish_reason).toBe('length');
  });

  test('non-streamed replies carry the constant usage block, whatever was generated', async () => {
    for (const max of [3, 21]) {
      const r = await fetch(`${bare.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages, max_tokens: max }) });
      const j = (await r.json()) as Record<string, any>;
      expect(countTokens(j.choices[0].message.content)).toBe(max);
      expect(j.choices[0].finish_reason).toBe('length');
      expect(j.usage).toEqual({ prompt_tokens: 100, completion_tokens: 100, total_tokens: 200 });
    }
    const c = await fetch(`${bare.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt, max_tokens: 4 }) });
    expect(((await c.json()) as Record<string, any>).usage).toEqual({ prompt_tokens: 100, completion_tokens: 100, total_tokens: 200 });
  });

  test('endpoints: /v1/models and Ollama /api/tags answer; no metrics, tokenize, props, slots, /api/version or /api/chat', async () => {
    const models = (await (await fetch(`${bare.url}/v1/models`)).json()) as Record<string, any>;
    expect(models.data).toEqual([{ id: 'sim-bare', object: 'model', created: 0, owned_by: 'user' }]);
    const tags = (await (await fetch(`${bare.url}/api/tags`)).json()) as Record<string, any>;
    expect(tags.models.map((m: Record<string, unknown>) => m.name)).toEqual(['sim-bare']);
    for (const [method, path] of [
      ['GET', '/metrics'],
      ['POST', '/tokenize'],
      ['POST', '/v1/tokenize'],
      ['POST', '/detokenize'],
      ['GET', '/props'],
      ['GET', '/slots'],
      ['GET', '/api/version'],
      ['POST', '/api/chat'],
      ['POST', '/api/generate'],
      ['GET', '/version'],
    ] as const) {
      const r = await fetch(`${bare.url}${path}`, { method, ...(method === 'POST' ? { body: JSON.stringify({ prompt: 'a', model: 'sim-bare', messages }) } : {}) });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
  });

  test('one request at a time: the others wait in the queue', async () => {
    const ids = ['q1', 'q2', 'q3'];
    const seen = ids.map((id) => rawRequest(bare.url, 'POST', '/v1/chat/completions', { messages, max_tokens: 30, stream: true }, { 'X-Request-Id': id }));
    // while the first streams, the other two are waiting
    let waitingSeen = 0;
    for (let i = 0; i < 100 && waitingSeen < 2; i++) {
      const st = (await (await fetch(`${bare.url}/_sim/state`)).json()) as { running: number; waiting: number };
      expect(st.running).toBeLessThanOrEqual(1);
      waitingSeen = Math.max(waitingSeen, st.waiting);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(waitingSeen).toBe(2);
    await Promise.all(seen);
    const truths = await Promise.all(ids.map((id) => truthOf(bare, id)));
    // one after the other: a request's first chunk comes after the previous one's last
    const byStart = [...truths].sort((a, b) => a.tokens[0]![0] - b.tokens[0]![0]);
    for (let i = 1; i < byStart.length; i++) expect(byStart[i]!.tokens[0]![0]).toBeGreaterThanOrEqual(byStart[i - 1]!.tokens.at(-1)![0]);
  });

  test('the ollamaVersion knob adds GET /api/version (a server that looks like Ollama to a detector)', async () => {
    const s = await sim('bare', { wire: { ollamaVersion: true } });
    const r = await fetch(`${s.url}/api/version`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ version: '0.0.0-sim' });
    expect((await fetch(`${s.url}/api/chat`, { method: 'POST', body: '{}' })).status).toBe(404);
  });
});

describe('wire knobs, each alone on the vllm personality', () => {
  const streamBody = { model: 'sim-tiny', messages, max_tokens: 6, stream: true, stream_options: { include_usage: true }, ignore_eos: true };

  test('closeDelimited: HTTP/1.0 and the close; the rest stays vLLM (usage, terminated [DONE])', async () => {
    const s = await sim('vllm', { wire: { closeDelimited: true } });
    const r = await rawRequest(s.url, 'POST', '/v1/chat/completions', streamBody);
    expect(r.statusLine).toBe('HTTP/1.0 200 OK');
    expect(r.headers['transfer-encoding']).toBeUndefined();
    expect(r.closedByServer).toBe(true);
    expect(r.body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(chunksOf(r.body).at(-1)!.usage.completion_tokens).toBe(6);
  });

  test('unterminatedLastEvent: a chunked HTTP/1.1 body whose last bytes are data: [DONE]', async () => {
    const s = await sim('vllm', { wire: { unterminatedLastEvent: true } });
    const r = await rawRequest(s.url, 'POST', '/v1/chat/completions', streamBody, { Connection: 'close' });
    expect(r.statusLine).toBe('HTTP/1.1 200 OK');
    expect(r.headers['transfer-encoding']).toBe('chunked');
    const text = await (await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(streamBody) })).text();
    expect(text.endsWith('}\n\ndata: [DONE]')).toBe(true);
  });

  test('stringNullFinish: "null" on every non-final chunk, role chunk included', async () => {
    const s = await sim('vllm', { wire: { stringNullFinish: true } });
    const text = await (await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(streamBody) })).text();
    const fin = chunksOf(text)
      .filter((j) => j.choices.length > 0)
      .map((j) => j.choices[0].finish_reason);
    expect(fin[0]).toBe('null');
    expect(fin.slice(0, -1).every((f) => f === 'null')).toBe(true);
    expect(fin.at(-1)).toBe('length');
    expect(text).not.toContain('"finish_reason":null');
  });

  test('tokensPerChunk [3, 3]: every text chunk carries 3 tokens', async () => {
    const s = await sim('vllm', { wire: { tokensPerChunk: [3, 3] } });
    const text = await (await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 't3' }, body: JSON.stringify({ ...streamBody, max_tokens: 9 }) })).text();
    const texts = chunksOf(text).map(textOf).filter((t) => t !== '');
    expect(texts.map(countTokens)).toEqual([3, 3, 3]);
    expect((await truthOf(s, 't3')).tokens.map(([, n]) => n)).toEqual([3, 3, 3]);
  });

  test('noStreamUsage: no usage in the stream even with include_usage; non-streamed replies keep theirs', async () => {
    const s = await sim('llamacpp', { wire: { noStreamUsage: true } });
    const text = await (await fetch(`${s.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt, max_tokens: 4, stream: true, stream_options: { include_usage: true } }) })).text();
    expect(text).toContain('data: [DONE]');
    expect(text).not.toContain('"usage"');
    const j = (await (await fetch(`${s.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt, max_tokens: 4 }) })).json()) as Record<string, any>;
    expect(j.usage.completion_tokens).toBe(4);
  });

  test('constantUsage: the fixed block in streamed usage too', async () => {
    const s = await sim('vllm', { wire: { constantUsage: true } });
    const text = await (await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(streamBody) })).text();
    expect(chunksOf(text).at(-1)!.usage).toEqual({ prompt_tokens: 100, completion_tokens: 100, total_tokens: 200 });
  });

  test('noMetrics and noTokenize: 404 where vLLM has them', async () => {
    const plain = await sim('vllm');
    expect((await fetch(`${plain.url}/metrics`)).status).toBe(200);
    const s = await sim('vllm', { wire: { noMetrics: true, noTokenize: true } });
    expect((await fetch(`${s.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${s.url}/tokenize`, { method: 'POST', body: JSON.stringify({ prompt: 'a' }) })).status).toBe(404);
    expect((await fetch(`${s.url}/detokenize`, { method: 'POST', body: JSON.stringify({ tokens: [1] }) })).status).toBe(404);
  });

  test('usage-factor fault: usage says twice the streamed tokens (header and profile)', async () => {
    const s = await sim('vllm');
    const text = await (await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-sim-fault': 'usage-factor=2' }, body: JSON.stringify(streamBody) })).text();
    const chunks = chunksOf(text);
    expect(countTokens(chunks.map(textOf).join(''))).toBe(6);
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 12, total_tokens: chunks.at(-1)!.usage.prompt_tokens + 12 });
    const p = await sim('vllm', { faults: { usageFactor: 2 } });
    const j = (await (await fetch(`${p.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages, max_tokens: 5, ignore_eos: true }) })).json()) as Record<string, any>;
    expect(j.usage.completion_tokens).toBe(10);
  });

  test('ownedBy and strictFields: a gateway that relays owned_by "vllm" and refuses non-standard fields', async () => {
    const s = await sim('bare', { wire: { ownedBy: 'vllm', strictFields: true } });
    expect(((await (await fetch(`${s.url}/v1/models`)).json()) as Record<string, any>).data[0].owned_by).toBe('vllm');
    const bad = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages, max_tokens: 2, stream: true, ignore_eos: true }) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Unrecognized request argument supplied: ignore_eos');
    const so = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages, max_tokens: 2, stream: true, stream_options: { include_usage: true, continuous_usage_stats: true } }) });
    expect(so.status).toBe(400);
    expect(await so.text()).toContain('stream_options.continuous_usage_stats');
    const ok = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages, max_tokens: 2, stream: true, stream_options: { include_usage: true } }) });
    expect(ok.status).toBe(200);
    await ok.text();
  });
});

describe('wire knob validation', () => {
  test('an unknown knob or a bad value is an error naming it and the fix', () => {
    expect(() => resolveSimProfile('tiny', { wire: { closeDelimted: true } as never })).toThrow(/wire knob "closeDelimted" is unknown: use one of closeDelimited/);
    expect(() => resolveSimProfile('tiny', { wire: { tokensPerChunk: [4, 2] } })).toThrow(/tokensPerChunk = \[4,2\] is invalid: give \[min, max\]/);
    expect(() => resolveSimProfile('tiny', { wire: { noMetrics: 'yes' as never } })).toThrow(/noMetrics = "yes" is invalid: it must be true or false/);
    expect(() => resolveSimProfile('tiny', { faults: { usageFactor: -1 } })).toThrow(/faults\.usageFactor = -1 is invalid/);
    expect(resolveSimProfile('tiny', {}, 'bare').personality).toBe('bare');
    expect(resolveSimProfile('bare').maxRunningRequests).toBe(1);
  });
});
