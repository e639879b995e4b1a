/**
 * Test helpers for the streaming client: a minimal OpenAI-style decode (the real adapters live in
 * src/engines) and a loopback SSE server on port 0 whose behaviour each test scripts per path.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DecodedChunk } from '../../src/shapes/engine.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
export function decodeOpenAi(payload: unknown): DecodedChunk {
  const p = payload as any;
  if (p !== null && typeof p === 'object' && p.error !== undefined) {
    const e = p.error;
    return {
      hasText: false,
      reasoning: false,
      error: typeof e === 'string' ? { message: e } : { message: String(e?.message ?? 'error'), code: e?.code },
    };
  }
  const choice = Array.isArray(p?.choices) ? p.choices[0] : undefined;
  const delta = choice?.delta ?? {};
  const content = delta.content ?? choice?.text;
  const reasoningText = delta.reasoning_content ?? delta.reasoning;
  const hasContent = typeof content === 'string' && content.length > 0;
  const hasReasoning = typeof reasoningText === 'string' && reasoningText.length > 0;
  const chunk: DecodedChunk = { hasText: hasContent || hasReasoning, reasoning: !hasContent && hasReasoning };
  if (Array.isArray(choice?.token_ids)) chunk.tokenCount = choice.token_ids.length;
  if (p?.usage) {
    chunk.usage = {
      promptTokens: p.usage.prompt_tokens,
      completionTokens: p.usage.completion_tokens,
      cachedTokens: p.usage.prompt_tokens_details?.cached_tokens,
    };
  }
  if (typeof choice?.finish_reason === 'string') chunk.finishReason = choice.finish_reason;
  if (p?.stop === true) chunk.final = true;
  return chunk;
}

/** one OpenAI chat chunk as an SSE event */
export function ev(obj: unknown): string {
  return `data: ${JSON.stringify(obj)}\n\n`;
}
export const DONE = 'data: [DONE]\n\n';
export const role = (usage?: object): string => ev({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }], ...(usage ? { usage } : {}) });
export const text = (content: string, extra: object = {}): string => ev({ choices: [{ index: 0, delta: { content }, ...extra }] });
export const withUsage = (content: string, completion: number, prompt = 10): string =>
  ev({ choices: [{ index: 0, delta: { content } }], usage: { prompt_tokens: prompt, completion_tokens: completion } });

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void | Promise<void>;

export interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  origin: string;
  /** register a handler for a path */
  on(path: string, handler: Handler): void;
  seen: Seen[];
  connections: number;
  close(): Promise<void>;
}

/** SSE response headers */
export function sseHead(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** write events one by one with a pause between them, then end */
export async function writeSlowly(res: http.ServerResponse, events: string[], gapMs: number, end = true): Promise<void> {
  for (const e of events) {
    if (res.destroyed) return;
    res.write(e);
    await sleep(gapMs);
  }
  if (end && !res.destroyed) res.end();
}

export async function startServer(): Promise<TestServer> {
  const handlers = new Map<string, Handler>();
  const sockets = new Set<import('node:net').Socket>();
  const state: TestServer = {
    origin: '',
    on: (path, h) => handlers.set(path, h),
    seen: [],
    connections: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      const path = req.url ?? '/';
      state.seen.push({ path, headers: req.headers, body });
      const h = handlers.get(path);
      if (!h) {
        res.writeHead(h === undefined && path === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
        res.end(path === '/v1/models' ? '{"data":[]}' : '{"error":"no handler"}');
        return;
      }
      void Promise.resolve(h(req, res, body)).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
