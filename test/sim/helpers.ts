/** Plain node:http helpers for the sim tests (no dependency on the project's client). */

import { request as httpRequest } from 'node:http';
import { monoMs } from '../../src/clock.js';

export interface SseEvent {
  atMs: number;
  data: string;
}

export interface StreamResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  headersMs: number;
  events: SseEvent[];
  /** parsed JSON payloads of data events that parse; [DONE] and bad JSON excluded */
  json: Record<string, any>[];
  done: boolean;
  malformed: number;
  body: string;
  endMs: number;
}

export interface PostOptions {
  headers?: Record<string, string>;
  /** destroy the request after this many data events */
  abortAfterEvents?: number;
  /** destroy the request when this returns true (checked per event) */
  abortWhen?: (e: SseEvent) => boolean;
}

/** POSTs JSON and reads the response as SSE (or plain body), timestamping each data event on arrival. */
export function post(url: string, path: string, body: unknown, opts: PostOptions = {}): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      `${url}${path}`,
      // a fresh connection per request: the llama.cpp personality closes after each stream, as the
      // real server does, and a kept-alive agent would race that close
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...opts.headers } },
      (res) => {
        const headersMs = monoMs();
        const out: StreamResult = { status: res.statusCode ?? 0, headers: res.headers, headersMs, events: [], json: [], done: false, malformed: 0, body: '', endMs: 0 };
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (s: string) => {
          const t = monoMs();
          out.body += s;
          buf += s;
          let idx: number;
          while ((idx = buf.indexOf('\n\n')) >= 0) {
            const ev = buf.slice(0, idx);
            buf = buf.slice(idx + 2);
            if (!ev.startsWith('data: ')) continue;
            const data = ev.slice(6);
            const e = { atMs: t, data };
            out.events.push(e);
            if (data === '[DONE]') out.done = true;
            else {
              try {
                out.json.push(JSON.parse(data));
              } catch {
                out.malformed++;
              }
            }
            if ((opts.abortAfterEvents !== undefined && out.events.length >= opts.abortAfterEvents) || opts.abortWhen?.(e)) {
              req.destroy();
              out.endMs = monoMs();
              resolve(out);
              return;
            }
          }
        });
        res.on('end', () => {
          out.endMs = monoMs();
          resolve(out);
        });
        res.on('error', () => {
          out.endMs = monoMs();
          resolve(out);
        });
      },
    );
    req.on('error', (e) => {
      if (opts.abortAfterEvents !== undefined || opts.abortWhen) return;
      reject(e);
    });
    req.end(payload);
  });
}

export async function getJson(url: string, path: string): Promise<any> {
  const r = await fetch(`${url}${path}`);
  return r.json();
}

export async function getText(url: string, path: string): Promise<string> {
  const r = await fetch(`${url}${path}`);
  return r.text();
}

export async function postJson(url: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

/** POSTs a raw body (e.g. malformed JSON) and reads the whole answer. */
export async function postRaw(url: string, path: string, body: string): Promise<{ status: number; body: string }> {
  const r = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: r.status, body: await r.text() };
}

/** Value of a Prometheus series (first line starting with `name{` or `name `). */
export function metricValue(text: string, name: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

/** Polls until `fn` returns true or the timeout passes. */
export async function waitFor(fn: () => Promise<boolean>, timeoutMs = 5000, stepMs = 20): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return true;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return false;
}

/** Text of content/reasoning/text deltas. */
export function deltaText(j: Record<string, any>): string {
  const c = j.choices?.[0];
  if (!c) return '';
  return (c.delta?.content ?? '') + (c.delta?.reasoning ?? '') + (c.delta?.reasoning_content ?? '') + (c.text ?? '');
}
