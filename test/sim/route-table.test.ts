/**
 * The sim's route table (src/sim/route-table.ts): a request matches its exact key, then the
 * any-method key of its path, then a prefix key; a key defined twice is refused; every
 * personality's table (with every wire knob on) joins without a clash.
 */
import { describe, expect, test } from 'vitest';
import { SIM_PERSONALITY_NAMES, resolveSimProfile } from '../../src/sim/profiles.js';
import { joinRoutes, RouteTable, type Handler } from '../../src/sim/route-table.js';
import { createSimServer } from '../../src/sim/server.js';

const named = (name: string): Handler => Object.assign(() => {}, { routeName: name });
const nameOf = (h: Handler | undefined): string | undefined => (h as { routeName?: string } | undefined)?.routeName;

describe('RouteTable', () => {
  const table = new RouteTable({
    'GET /metrics': named('get-metrics'),
    '* /tokenize': named('any-tokenize'),
    'POST /tokenize': named('post-tokenize'),
    'GET /_sim/truth': named('truth-list'),
    'GET /_sim/truth/*': named('truth-one'),
  });

  test('exact key first, then any method, then prefix; else nothing', () => {
    expect(nameOf(table.find('GET', '/metrics'))).toBe('get-metrics');
    expect(table.find('POST', '/metrics')).toBeUndefined();
    expect(nameOf(table.find('POST', '/tokenize'))).toBe('post-tokenize');
    expect(nameOf(table.find('GET', '/tokenize'))).toBe('any-tokenize');
    expect(nameOf(table.find('GET', '/_sim/truth'))).toBe('truth-list');
    expect(nameOf(table.find('GET', '/_sim/truth/req-1'))).toBe('truth-one');
    expect(nameOf(table.find('GET', '/_sim/truth/'))).toBe('truth-one');
    expect(table.find('POST', '/_sim/truth/req-1')).toBeUndefined();
    expect(table.find('GET', '/nowhere')).toBeUndefined();
  });

  test('joinRoutes refuses a key defined twice', () => {
    expect(() => joinRoutes({ 'GET /a': named('1') }, { 'GET /a': named('2') })).toThrow('sim route GET /a is defined twice');
    expect(Object.keys(joinRoutes({ 'GET /a': named('1') }, { 'POST /a': named('2') }))).toEqual(['GET /a', 'POST /a']);
  });
});

describe("every personality's table joins", () => {
  for (const personality of SIM_PERSONALITY_NAMES) {
    test(`${personality}, plain and with the endpoint knobs on`, async () => {
      for (const wire of [{}, { noMetrics: true, noTokenize: true, ollamaVersion: true }]) {
        const sim = createSimServer(resolveSimProfile('tiny', { wire }, personality));
        await sim.close();
      }
    });
  }
});
