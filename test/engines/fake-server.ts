/** A loopback HTTP server (port 0) answering fixed routes, recording what it got. For tests only. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  status?: number;
  json?: unknown;
  text?: string;
}
export type FakeRoute = FakeReply | ((body: unknown, req: IncomingMessage) => FakeReply);

export interface SeenRequest {
  method: string;
  path: string;
  authorization?: string;
  body: unknown;
}

export interface FakeServer {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** routes keyed by "METHOD /path" (path includes the query string) */
export async function startFake(routes: Record<string, FakeRoute>): Promise<FakeServer> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        // keep text
      }
      const path = req.url ?? '/';
      const entry: SeenRequest = { method: req.method ?? 'GET', path, body };
      if (req.headers.authorization !== undefined) entry.authorization = req.headers.authorization;
      seen.push(entry);
      const route = routes[`${req.method} ${path}`];
      const reply: FakeReply = route === undefined ? { status: 404, json: { detail: 'Not Found' } } : typeof route === 'function' ? route(body, req) : route;
      res.statusCode = reply.status ?? 200;
      if (reply.json !== undefined) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(reply.json));
      } else {
        res.setHeader('content-type', 'text/plain; version=0.0.4');
        res.end(reply.text ?? '');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
