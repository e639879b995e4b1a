/**
 * Replays recorded wire transcripts (test/helpers/transcript.ts) to a real client over loopback: a
 * node:net server on 127.0.0.1, port 0. Each connection reads HTTP/1.1 requests (head and
 * Content-Length body); a request takes the next transcript from the queue and the server plays that
 * transcript's socket events from the moment the request has arrived, each at its recorded offset
 * (after the options below): 'data' → the recorded bytes, 'end' → FIN, an ECONNRESET 'error' → a
 * reset. Playback stops at a 'client-close' (the recorder closed its side there; what followed was the
 * server answering that close). A transcript of several requests on one connection (b: the second
 * request written after the first response) absorbs that many requests on its connection: they get
 * exactly what the recording got, nothing more. A request when the queue is empty is logged and its
 * connection destroyed, so a test sees it.
 *
 * Timing: events are due at t0 + offset; a timer wakes ~1.5 ms early and setImmediate turns then
 * wait for the due time, so writes land within a fraction of a ms of it on an idle machine, without
 * drift (every due time is absolute).
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { monoMs } from '../../src/clock.js';
import type { Transcript, WireEvent } from './transcript.js';

export interface ReplayOptions {
  /** multiply every offset (after compressing); default 1 */
  timeScale?: number;
  /** a gap between two consecutive events longer than `overMs` is played as `toMs` (a long prefill, shortened) */
  compressGaps?: { overMs: number; toMs: number };
}

/** One playable event at the offset it is played at (ms after the request arrived). */
export interface ScheduledEvent {
  atMs: number;
  event: WireEvent;
}

/** The events the replay plays, with their played offsets. Tests derive their expectations from this. */
export function replaySchedule(t: Transcript, opts: ReplayOptions = {}): ScheduledEvent[] {
  const scale = opts.timeScale ?? 1;
  const out: ScheduledEvent[] = [];
  let prevRecorded = 0;
  let prevPlayed = 0;
  for (const e of t.events) {
    if (e.kind === 'client-close') break;
    const gap = e.atMs - prevRecorded;
    const played = opts.compressGaps && gap > opts.compressGaps.overMs ? opts.compressGaps.toMs : gap;
    prevRecorded = e.atMs;
    prevPlayed += played;
    if (e.kind === 'data' || e.kind === 'end' || (e.kind === 'error' && e.code === 'ECONNRESET')) {
      out.push({ atMs: prevPlayed * scale, event: e });
    }
  }
  return out;
}

export interface ReplayLogEntry {
  /** 1-based connection number */
  connection: number;
  requestLine: string;
  /** monoMs when the whole request had arrived */
  atMs: number;
  /** the transcript that answered it; `absorbed` when it was a later request of that transcript */
  transcript?: string;
  absorbed?: boolean;
}

export interface ReplayServer {
  origin: string;
  /** connections accepted */
  connections: number;
  log: ReplayLogEntry[];
  /** requests that found no transcript left */
  unexpected: ReplayLogEntry[];
  /** transcripts not played yet */
  remaining(): number;
  close(): Promise<void>;
}

interface ConnState {
  n: number;
  socket: net.Socket;
  buf: Buffer;
  /** the transcript playing on this connection and how many of its requests have arrived */
  active?: { t: Transcript; requests: number };
  ended: boolean;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export async function startReplayServer(queue: readonly Transcript[], opts: ReplayOptions = {}): Promise<ReplayServer> {
  const pending = [...queue];
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout | NodeJS.Immediate>();
  let closed = false;
  const state: ReplayServer = {
    origin: '',
    connections: 0,
    log: [],
    unexpected: [],
    remaining: () => pending.length,
    close: async () => {
      closed = true;
      for (const t of timers) {
        clearTimeout(t as NodeJS.Timeout);
        clearImmediate(t as NodeJS.Immediate);
      }
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const play = (conn: ConnState, schedule: ScheduledEvent[], t0: number): void => {
    let i = 0;
    const step = (): void => {
      if (closed || conn.socket.destroyed) return;
      const now = monoMs();
      while (i < schedule.length && t0 + schedule[i]!.atMs <= now) {
        const e = schedule[i++]!.event;
        if (e.kind === 'data') conn.socket.write(Buffer.from(e.base64, 'base64'));
        else if (e.kind === 'end') {
          conn.ended = true;
          conn.socket.end();
        } else if (e.kind === 'error') {
          conn.ended = true;
          conn.socket.resetAndDestroy();
          return;
        }
      }
      if (i >= schedule.length) return;
      const wait = t0 + schedule[i]!.atMs - now;
      if (wait > 2) {
        const h = setTimeout(() => {
          timers.delete(h);
          step();
        }, wait - 1.5);
        timers.add(h);
      } else {
        const h = setImmediate(() => {
          timers.delete(h);
          step();
        });
        timers.add(h);
      }
    };
    step();
  };

  const onRequest = (conn: ConnState, requestLine: string): void => {
    const entry: ReplayLogEntry = { connection: conn.n, requestLine, atMs: monoMs() };
    const active = conn.active;
    if (active && active.requests < active.t.requests.length) {
      // a later request of the playing transcript: it gets what the recording got (already scheduled)
      active.requests++;
      entry.transcript = active.t.name;
      entry.absorbed = true;
      state.log.push(entry);
      return;
    }
    if (conn.ended) {
      state.log.push(entry);
      return;
    }
    const t = pending.shift();
    if (t === undefined) {
      state.unexpected.push(entry);
      state.log.push(entry);
      conn.socket.destroy();
      return;
    }
    conn.active = { t, requests: 1 };
    entry.transcript = t.name;
    state.log.push(entry);
    play(conn, replaySchedule(t, opts), entry.atMs);
  };

  /** take every complete request off the connection's buffer */
  const parse = (conn: ConnState): void => {
    for (;;) {
      const headEnd = conn.buf.indexOf(HEAD_END);
      if (headEnd < 0) return;
      const head = conn.buf.subarray(0, headEnd).toString('latin1');
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      const bodyLen = m ? Number(m[1]) : 0;
      const total = headEnd + 4 + bodyLen;
      if (conn.buf.length < total) return;
      conn.buf = conn.buf.subarray(total);
      onRequest(conn, head.split('\r\n')[0] ?? '');
    }
  };

  const server = net.createServer({ noDelay: true }, (socket) => {
    state.connections++;
    sockets.add(socket);
    const conn: ConnState = { n: state.connections, socket, buf: Buffer.alloc(0), ended: false };
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => {
      conn.buf = conn.buf.length === 0 ? d : Buffer.concat([conn.buf, d]);
      parse(conn);
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
