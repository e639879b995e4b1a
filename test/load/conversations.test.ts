/**
 * Conversation workers (load/conversations.ts through runCell's `conversations`) against a small
 * recording server: each turn re-sends the previous turn's messages, its reply as streamed
 * (content, not reasoning) and a new user message; a failed turn ends its conversation; think
 * times separate the turns; every request's turn comes back in CellRun.turns.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCell, type CellRun } from '../../src/load/cell.js';
import type { CellConversations } from '../../src/load/conversations.js';
import type { ChatMessage } from '../../src/shapes/workload.js';
import { openaiSession } from '../helpers/load-session.js';

interface Seen {
  id: string;
  messages: ChatMessage[];
}

const sse = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`;
const THINK_MS = 30;

/** conversation k's turn t: a system message, then "k<k>t<i>" user messages and the replies */
const conversations: CellConversations = {
  turns: 3,
  request: (k, t, replies) => {
    const messages: ChatMessage[] = [{ role: 'system', content: `system of ${k}` }];
    for (let i = 1; i < t; i++) messages.push({ role: 'user', content: `k${k}t${i}` }, { role: 'assistant', content: replies[i - 1]! });
    messages.push({ role: 'user', content: `k${k}t${t}` });
    return { prompt: messages.map((m) => m.content).join('\n'), messages, maxTokens: 8, turn: t };
  },
  thinkMs: () => THINK_MS,
};

describe('conversation workers', () => {
  let server: Server;
  let url = '';
  const seen: Seen[] = [];
  let run: CellRun;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.method === 'GET') return res.end('{"data":[{"id":"m"}]}');
      let body = '';
      req.on('data', (b: Buffer) => (body += b.toString()));
      req.on('end', () => {
        const { messages } = JSON.parse(body) as { messages: ChatMessage[] };
        const last = messages[messages.length - 1]!.content;
        seen.push({ id: String(req.headers['x-request-id']), messages });
        // conversation 1's turn 2 fails
        if (last === 'k1t2') {
          res.writeHead(500, { 'content-type': 'application/json' });
          return res.end('{"error":{"message":"boom"}}');
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // a reasoning delta first (not part of the reply), then the reply in three pieces
        const pieces = [sse({ reasoning_content: 'hmm ' }), sse({ content: 'reply ' }), sse({ content: `to ${last}` }), sse({ content: ` (${messages.length})` })];
        let i = 0;
        const next = () => {
          if (i < pieces.length) {
            res.write(pieces[i++]);
            setTimeout(next, 5);
          } else {
            res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 10 * messages.length, completion_tokens: 4 } })}\n\ndata: [DONE]\n\n`);
          }
        };
        next();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    run = await runCell(openaiSession(url, { runId: 'conv' }), {
      context: 0,
      concurrency: 2,
      promptFor: () => {
        throw new Error('a conversation cell never asks promptFor');
      },
      scoutPrompts: [],
      windowMs: 700,
      gateTimeoutMs: 10_000,
      gateSettleMs: 0,
      drainTimeoutMs: 1000,
      metricsIntervalMs: 1000,
      conversations,
    });
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const bodyOf = (id: string) => seen.find((s) => s.id === id)!;
  /**
   * the requests the server answered: it records a body before it writes the head. A request sent
   * just before the window's end can be cut by the drain before its body reached the server (a
   * loaded machine: CI saw one), and has no head.
   */
  const answered = () => run.timelines.filter((t) => t.headersMs !== undefined);

  test('every worker request has its conversation and turn in CellRun.turns', () => {
    expect(run.turns).toBeDefined();
    expect(answered().length).toBeGreaterThan(6);
    for (const t of run.timelines) expect(run.turns!.get(t.id)).toBeDefined();
    for (const t of answered()) {
      const turn = run.turns!.get(t.id)!;
      expect(bodyOf(t.id), t.id).toBeDefined();
      expect(bodyOf(t.id).messages.at(-1)!.content).toBe(`k${turn.conversation}t${turn.turn}`);
    }
  });

  test('turn t re-sends turn t − 1 byte for byte, its streamed reply (no reasoning) and a new user message', () => {
    let checked = 0;
    for (const t of answered()) {
      const turn = run.turns!.get(t.id)!;
      if (turn.turn === 1) continue;
      const prev = run.timelines.find((p) => {
        const pt = run.turns!.get(p.id)!;
        return pt.conversation === turn.conversation && pt.turn === turn.turn - 1;
      })!;
      const before = bodyOf(prev.id).messages;
      const now = bodyOf(t.id).messages;
      expect(now.slice(0, before.length)).toEqual(before);
      expect(now[before.length]).toEqual({ role: 'assistant', content: `reply to ${before.at(-1)!.content} (${before.length})` });
      expect(now.length).toBe(before.length + 2);
      // the history the server counted: the previous turn's prompt + completion tokens
      expect(turn.historyTokens).toBe(10 * before.length + 4);
      // the think time passed between the reply's end and this turn (a timer may fire a ms early)
      expect(t.sendMs - prev.end!.atMs).toBeGreaterThanOrEqual(THINK_MS - 2);
      checked++;
    }
    expect(checked).toBeGreaterThan(2);
  });

  test('a failed turn ends its conversation; its worker starts a new one at turn 1', () => {
    const failed = run.timelines.find((t) => run.turns!.get(t.id)!.conversation === 1 && run.turns!.get(t.id)!.turn === 2)!;
    expect(failed.end?.kind).toBe('error');
    expect([...run.turns!.values()].some((x) => x.conversation === 1 && x.turn === 3)).toBe(false);
    const worker = /-w(\d+)-r\d+$/.exec(failed.id)![1];
    const afterwards = run.timelines.filter((t) => t.id.includes(`-w${worker}-`) && t.sendMs > failed.end!.atMs);
    expect(afterwards.length).toBeGreaterThan(0);
    const next = run.turns!.get(afterwards[0]!.id)!;
    expect(next.turn).toBe(1);
    expect(next.conversation).toBeGreaterThan(1);
  });

  test('conversations run T turns, then a new conversation starts', () => {
    const turnsOf = new Map<number, number[]>();
    for (const x of run.turns!.values()) turnsOf.set(x.conversation, [...(turnsOf.get(x.conversation) ?? []), x.turn]);
    const complete = [...turnsOf.entries()].filter(([, ts]) => ts.length === 3);
    expect(complete.length).toBeGreaterThan(0);
    for (const [, ts] of complete) expect(ts).toEqual([1, 2, 3]);
    expect(Math.max(...turnsOf.keys())).toBeGreaterThanOrEqual(3);
  });
});
