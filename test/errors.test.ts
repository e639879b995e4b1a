import net from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  CellFailure,
  ClientError,
  ConfigError,
  HttpCallError,
  ProbeError,
  SpeedMatrixError,
  ThresholdsError,
  createWorkerDispatchers,
  resolveSuite,
} from '../src/index.js';
import { parseThresholds } from '../src/thresholds/load.js';
import { getJson } from '../src/engines/http.js';
import { probeModels } from '../src/engines/openai.js';

/** a loopback port nothing listens on (opened, then closed) */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** the error a call throws (sync or async) */
async function caught(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('one error base class with stable codes', () => {
  it('every error class is a SpeedMatrixError with its code and name', () => {
    const cases: [SpeedMatrixError, string, string][] = [
      [new ConfigError('x'), 'ConfigError', 'config'],
      [new ThresholdsError('x'), 'ThresholdsError', 'thresholds'],
      [new ProbeError('x', 'no-model'), 'ProbeError', 'no-model'],
      [new HttpCallError('x', 'timeout'), 'HttpCallError', 'timeout'],
      [new ClientError('stall', 'x'), 'ClientError', 'stall'],
      [new CellFailure('x', true), 'CellFailure', 'cell-failed'],
    ];
    for (const [err, name, code] of cases) {
      expect(err).toBeInstanceOf(SpeedMatrixError);
      expect(err).toBeInstanceOf(Error);
      expect(err.name).toBe(name);
      expect(err.code).toBe(code);
      expect(String(err)).toBe(`${name}: x`);
    }
  });

  it("a cell's failure is its lines alone, without frames, unless debugging", () => {
    const plain = new CellFailure(['0/4 is Client-limited', '0/4 tok/s 10 < 20'], false);
    expect(plain.message).toBe('0/4 is Client-limited\n0/4 tok/s 10 < 20');
    expect(plain.stack).toBe(`CellFailure: ${plain.message}`);
    expect(new CellFailure('x', true).stack).toMatch(/^CellFailure: x\n\s+at /);
  });

  it('errors thrown by real calls carry it', async () => {
    const config = await caught(() => resolveSuite({ matrix: { contexts: [], concurrency: [1] } } as never));
    expect(config).toBeInstanceOf(SpeedMatrixError);
    expect(config).toMatchObject({ code: 'config' });

    const client = await caught(() => createWorkerDispatchers('not a url', 1));
    expect(client).toBeInstanceOf(SpeedMatrixError);
    expect(client).toMatchObject({ code: 'invalid-option', name: 'ClientError' });

    const thresholds = await caught(() => parseThresholds('{not json', 'thresholds/x.json'));
    expect(thresholds).toBeInstanceOf(SpeedMatrixError);
    expect(thresholds).toMatchObject({ code: 'thresholds' });

    const target = { baseUrl: `http://127.0.0.1:${await closedPort()}` };
    const http = await caught(() => getJson(target, '/metrics'));
    expect(http).toBeInstanceOf(SpeedMatrixError);
    expect(http).toMatchObject({ code: 'transport', name: 'HttpCallError' });

    const probe = await caught(() => probeModels(target));
    expect(probe).toBeInstanceOf(SpeedMatrixError);
    expect(probe).toMatchObject({ code: 'unreachable', name: 'ProbeError' });
  });
});
