import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/errors.js';
import { createWorkerDispatchers } from '../../src/client/pool.js';
import { streamRequest } from '../../src/client/stream.js';
import { DONE, decodeOpenAi, role, sseHead, startServer, text, writeSlowly, type TestServer } from './helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
  server.on('/stream', async (_req, res) => {
    sseHead(res);
    await writeSlowly(res, [role(), text('a'), text('b'), text('c'), text('d'), DONE], 10);
  });
});
afterAll(async () => {
  await server.close();
});

describe('createWorkerDispatchers', () => {
  it('pre-opens one connection per worker and reuses it for the streams', async () => {
    const before = server.connections;
    const pool = createWorkerDispatchers(server.origin, 8);
    try {
      const report = await pool.preconnect();
      expect(report).toEqual({ opened: 8, failed: 0 });
      expect(server.connections - before).toBe(8);
      for (let round = 0; round < 2; round++) {
        const timelines = await Promise.all(
          pool.clients.map((dispatcher, i) =>
            streamRequest({
              id: `pool-${round}-${i}`,
              dispatcher,
              origin: server.origin,
              path: '/stream',
              body: { i },
              decode: decodeOpenAi,
              endsWithDone: true,
              timeouts: { headersMs: 10_000, stallMs: 10_000 },
            }),
          ),
        );
        for (const t of timelines) {
          expect(t.end?.kind).toBe('done');
          expect(t.chunkTokens).toEqual([1, 1, 1, 1]);
        }
      }
      // no new connection was needed
      expect(server.connections - before).toBe(8);
    } finally {
      await pool.closeAll();
    }
    expect(pool.clients.every((c) => c.closed)).toBe(true);
  });

  it('reports preconnect failures and non-2xx answers without throwing', async () => {
    const pool = createWorkerDispatchers(server.origin, 2);
    try {
      const report = await pool.preconnect({ path: '/missing' });
      expect(report.opened).toBe(2);
      expect(report.firstNon2xxStatus).toBe(404);
    } finally {
      await pool.destroyAll();
    }
  });

  it('serves 300 concurrent streams, one connection each', async () => {
    const count = 300;
    const before = server.connections;
    const pool = createWorkerDispatchers(server.origin, count);
    try {
      const report = await pool.preconnect();
      expect(report.opened).toBe(count);
      const timelines = await Promise.all(
        pool.clients.map((dispatcher, i) =>
          streamRequest({
            id: `scale-${i}`,
            dispatcher,
            origin: server.origin,
            path: '/stream',
            body: {},
            decode: decodeOpenAi,
            endsWithDone: true,
            timeouts: { headersMs: 20_000, stallMs: 20_000 },
          }),
        ),
      );
      expect(timelines.filter((t) => t.end?.kind === 'done').length).toBe(count);
      expect(timelines.every((t) => t.chunkTokens.length === 4)).toBe(true);
      expect(server.connections - before).toBe(count);
    } finally {
      await pool.destroyAll();
    }
  });

  it('rejects invalid settings with the field, the rule and the fix', () => {
    expect(() => createWorkerDispatchers('not a url', 1)).toThrow(ClientError);
    expect(() => createWorkerDispatchers('ftp://x', 1)).toThrow(/http: or https:/);
    expect(() => createWorkerDispatchers(server.origin, 0)).toThrow(/count/);
    expect(() => createWorkerDispatchers(server.origin, 1, { connectTimeoutMs: -5 })).toThrow(/connectTimeoutMs/);
  });
});
