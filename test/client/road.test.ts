/**
 * Faults on the road to the server are named (issue 19): a body compressed although we asked for
 * none, a proxy's HTML error page, a certificate Node does not trust.
 */
import { gzipSync } from 'node:zlib';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { errorMessageFromBody, summarizeHtml } from '../../src/client/error-body.js';
import { streamRequest } from '../../src/client/stream.js';
import { tlsProblem } from '../../src/client/tls.js';
import { ProbeError, probeModels } from '../../src/engines/openai.js';
import { closeControlAgent } from '../../src/engines/http.js';
import { decodeOpenAi, DONE, startServer, text, type TestServer } from './helpers.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  // a gateway that gzips whatever it is asked (the request sent no Accept-Encoding)
  server.on('/gz/v1/models', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(gzipSync('{"object":"list","data":[{"id":"m","object":"model"}]}'));
  });
  server.on('/gz/v1/chat/completions', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
    res.end(gzipSync(text('hello') + DONE));
  });
  server.on('/html/v1/chat/completions', (_req, res) => {
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end('<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n');
  });
});
afterAll(async () => {
  await server.close();
  await closeControlAgent();
});

describe('an unrequested Content-Encoding is named', () => {
  test('the probe: not "without any model id", but the encoding and the fix', async () => {
    const err = await probeModels({ baseUrl: `${server.origin}/gz` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProbeError);
    expect((err as Error).message).toMatch(/Content-Encoding: gzip although the request asked for no encoding; a proxy or gateway on the way compresses it/);
  });

  test('a stream: a protocol failure naming the encoding, not "no-done"', async () => {
    const client = new Client(server.origin);
    try {
      const t = await streamRequest({
        id: 'gz-1',
        dispatcher: client,
        origin: server.origin,
        path: '/gz/v1/chat/completions',
        body: {},
        decode: decodeOpenAi,
        endsWithDone: true,
        timeouts: { headersMs: 5_000, stallMs: 5_000 },
      });
      expect(t.end).toMatchObject({ kind: 'error', code: 'protocol' });
      expect(t.end?.kind === 'error' && t.end.message).toMatch(/Content-Encoding: gzip/);
    } finally {
      await client.close();
    }
  });
});

describe('an HTML error page is summarised, not dumped', () => {
  test("a proxy's 502 reads as its title", async () => {
    const client = new Client(server.origin);
    try {
      const t = await streamRequest({
        id: 'html-1',
        dispatcher: client,
        origin: server.origin,
        path: '/html/v1/chat/completions',
        body: {},
        decode: decodeOpenAi,
        endsWithDone: true,
        timeouts: { headersMs: 5_000, stallMs: 5_000 },
      });
      expect(t.end?.kind === 'error' && t.end.message).toBe('HTTP 502: an HTML page "502 Bad Gateway" (a proxy or gateway answered, not the engine)');
    } finally {
      await client.close();
    }
  });

  test('title, else first heading, else first words; JSON and plain text as before', () => {
    expect(summarizeHtml('<!DOCTYPE html><html><body><h1>Sign in &amp; continue</h1></body></html>')).toContain('"Sign in & continue"');
    expect(summarizeHtml('<html><body>Service   temporarily unavailable</body></html>')).toContain('"Service temporarily unavailable"');
    expect(summarizeHtml('{"error":"x"}')).toBeUndefined();
    expect(errorMessageFromBody('{"error":{"message":"bad"}}')).toBe('bad');
    expect(errorMessageFromBody('plain words')).toBe('plain words');
  });
});

describe('TLS failures are named with the fix', () => {
  test.each([
    ['DEPTH_ZERO_SELF_SIGNED_CERT', /self-signed.*NODE_EXTRA_CA_CERTS=/],
    ['SELF_SIGNED_CERT_IN_CHAIN', /self-signed CA.*NODE_EXTRA_CA_CERTS=/],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', /CA that Node does not know.*NODE_EXTRA_CA_CERTS=/],
    ['ERR_TLS_CERT_ALTNAME_INVALID', /another host name \(ERR_TLS_CERT_ALTNAME_INVALID\); use the host name the certificate names/],
    ['CERT_HAS_EXPIRED', /expired \(CERT_HAS_EXPIRED\); renew/],
  ])('%s', (code, message) => {
    const err = Object.assign(new Error('fetch failed'), { cause: Object.assign(new Error('x'), { code }) });
    expect(tlsProblem(err)).toMatch(message);
  });

  test('a connection refusal is not a TLS problem', () => {
    expect(tlsProblem(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBeUndefined();
  });
});
