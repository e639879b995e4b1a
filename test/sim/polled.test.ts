/**
 * The polled stream and the headers-at-once knobs (issue 60): a server whose own HTTP layer polls
 * the engine writes, every pollMs, what was generated since the last poll as one chunk, the first
 * poll (firstPollMs after the request came) carrying the backlog; with headersFirst its headers go
 * out when a request arrives, even while a one-request engine (maxRunningRequests 1) keeps it waiting.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { monoMs } from '../../src/clock.js';
import { post } from './helpers.js';

let sim: SimHandle;
const body = { model: 'sim-tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 24, stream: true, stream_options: { include_usage: true, continuous_usage_stats: true }, ignore_eos: true };

beforeAll(async () => {
  sim = await startSim({ profile: 'tiny', overrides: { stepBaseMs: 5, stepPerRequestMs: 0, maxRunningRequests: 1, eosProbability: 0, wire: { pollMs: 20, firstPollMs: 60, headersFirst: true } } });
});
afterAll(() => sim?.close());

describe('sim wire knobs pollMs, firstPollMs and headersFirst', () => {
  test('one stream: a backlog first chunk at the first poll, then a chunk a poll, every token accounted for', async () => {
    const r = await post(sim.url, '/v1/chat/completions', body);
    expect(r.status).toBe(200);
    expect(r.done).toBe(true);
    const counts = r.json.filter((j) => j.choices?.[0]?.delta?.content).map((j) => j.usage.completion_tokens as number);
    const perChunk = counts.map((c, i) => c - (i === 0 ? 0 : counts[i - 1]!));
    expect(counts[counts.length - 1]).toBe(24);
    // 5 ms steps: the first poll, 60 ms after the request, finds several tokens; then about 4 a poll
    expect(perChunk[0]).toBeGreaterThanOrEqual(5);
    expect(Math.max(...perChunk.slice(1, -1))).toBeGreaterThan(1);
    expect(counts.length).toBeLessThan(24);
    const truth = (await (await fetch(`${sim.url}/_sim/truth`)).json()) as Array<Record<string, any>>;
    const rec = truth[truth.length - 1]!;
    // the writes are the polls', 20 ms apart; the engine's own times are its steps'
    const writes = (rec.tokens as [number, number][]).map(([at]) => at);
    for (let i = 2; i < writes.length; i++) expect(writes[i]! - writes[i - 1]!).toBeGreaterThan(15);
    expect(rec.genTokens).toBe(24);
    const ownStepMs = (rec.genLastMs - rec.genFirstMs) / (rec.genTokens - rec.genFirstTokens);
    expect(ownStepMs).toBeLessThan(12);
  });

  test('four at once on a one-request engine: every response\'s headers come at once, the tokens one stream at a time', async () => {
    const sent = monoMs();
    const rs = await Promise.all([0, 1, 2, 3].map(() => post(sim.url, '/v1/chat/completions', body)));
    const firstTokens = rs.map((r) => r.events.find((e) => e.data.includes('"content":"') && !e.data.includes('"content":""'))!.atMs).sort((a, b) => a - b);
    for (const r of rs) {
      expect(r.done).toBe(true);
      expect(r.headersMs - sent).toBeLessThan(firstTokens[0]! - sent);
    }
    // each stream's tokens start after the one before it has ended
    const ends = rs.map((r) => r.endMs).sort((a, b) => a - b);
    for (let i = 1; i < 4; i++) expect(firstTokens[i]!).toBeGreaterThanOrEqual(ends[i - 1]! - 25);
  });

  test('firstPollMs without pollMs, or a poll under 1 ms, names the knob and the fix', async () => {
    await expect(startSim({ profile: 'tiny', overrides: { wire: { firstPollMs: 50 } } })).rejects.toThrow(/firstPollMs needs pollMs/);
    await expect(startSim({ profile: 'tiny', overrides: { wire: { pollMs: 0 } } })).rejects.toThrow(/pollMs = 0 is invalid/);
  });
});
