/**
 * llama.cpp's failures, said with what they mean (found on a real llama.cpp of August 2026):
 * - "Context size has been exceeded." comes mid-stream to every running request at once when the
 *   KV cache fills; on a server whose slots share one cache but whose layout the run could not read
 *   (a remote one), the message names the likely cause and the setting, with the figures read;
 * - "The model produced output that does not match the expected … format" comes after a reply's
 *   last token when its text does not parse (a cut multi-byte character, random weights).
 * The server's own words stay first; the explanation follows in brackets, on the failed request's
 * message (which the cell's failure line and the page show).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'undici';
import { afterAll, describe, expect, test } from 'vitest';
import { ConnectionPolicy } from '../../src/client/connections.js';
import { LlamacppAdapter } from '../../src/engines/llamacpp.js';
import { sendRequest, type LoadSession } from '../../src/load/session.js';
import type { ServerFacts } from '../../src/shapes/engine.js';

const facts = (kv: number, source = 'GET /props n_ctx × total_slots'): ServerFacts => ({
  engine: { value: 'llamacpp', source: 't' },
  model: { value: 'm', source: 't' },
  maxModelLen: { value: 8192, source: 't' },
  maxRunningRequests: { value: 4, source: 't' },
  kvCapacityTokens: { value: kv, source },
});

describe('explainError', () => {
  const adapter = new LlamacppAdapter();
  test('context exceeded where the run read n_ctx × slots: a shared cache is the likely cause, with the setting and the -np fix', () => {
    expect(adapter.explainError('error event in stream (code 500): Context size has been exceeded.', facts(32_768))).toBe(
      "llama.cpp's KV cache filled, and it fails every request it is running at once: its 4 slots likely share one cache (-kvu, its default when started without -np), " +
        'which holds n_ctx = 8,192 tokens in all, not 32,768 as read. Set target.kvCapacityTokens to 8192 so such cells read Over capacity, or start the server with -np 4 for a cache per slot',
    );
  });

  test('context exceeded where the run already holds the shared capacity: the fact, no wrong advice', () => {
    expect(adapter.explainError('Context size has been exceeded.', facts(8192, 'GET /props n_ctx: the 4 slots share one KV cache'))).toBe(
      "llama.cpp's KV cache filled, and it fails every request it is running at once",
    );
  });

  test("a reply its parser rejects, and other messages (nothing added)", () => {
    expect(adapter.explainError('error event in stream (code 500): The model produced output that does not match the expected peg-native format', facts(32_768))).toMatch(
      /^llama\.cpp parses each reply when it ends and fails the request when the text does not parse: a reply cut inside a multi-byte character by max_tokens/,
    );
    expect(adapter.explainError('HTTP 503: Loading model', facts(32_768))).toBeUndefined();
  });
});

describe("a failed request's message through the session", () => {
  let server: Server;
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test("the server's words, then the meaning in brackets", async () => {
    // llama.cpp's stream when its KV cache fills: a token, then the error event, then the close (no [DONE])
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"a"}}],"object":"chat.completion.chunk"}\n\n');
      res.end('data: {"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}\n\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const session: LoadSession = {
      target: { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
      adapter: new LlamacppAdapter(),
      facts: facts(32_768),
      model: 'm',
      endpoint: 'chat',
      maxOutputTokens: 16,
      timeouts: { headersMs: 5000, stallMs: 5000, unreachableRetryMs: 0 },
      runId: 't',
      connections: new ConnectionPolicy(),
      hasMetrics: false,
    };
    const client = new Client(session.target.baseUrl);
    const t = await sendRequest(session, { id: 'r1', prompt: 'hi', maxTokens: 16, dispatcher: client }).finally(() => client.close());
    expect(t.end?.kind).toBe('error');
    const message = t.end?.kind === 'error' ? t.end.message : '';
    expect(message).toMatch(/^error event in stream \(code 500\): Context size has been exceeded\. \(llama\.cpp's KV cache filled/);
    expect(message).toContain('Set target.kvCapacityTokens to 8192');
  });
});
