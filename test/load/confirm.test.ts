/**
 * Engine detection confirms its choice with one streamed request (issue 18 item 4), against the
 * simulator: a server that looks like one engine but refuses that engine's requests falls back to
 * the generic adapter with a note; a real engine is confirmed silently; an engine the user set is
 * never confirmed.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { detectEngine } from '../../src/engines/detect.js';
import { closeControlAgent } from '../../src/engines/http.js';
import type { HttpTarget } from '../../src/shapes/engine.js';
import { CONFIRM_MAX_TOKENS, confirmDetection } from '../../src/load/confirm.js';
import { openRun } from '../../src/matrix/open.js';
import { startSim, type SimHandle, type SimProfileOverrides } from '../../src/sim/index.js';
import { drawFaults, requestSeed } from '../../src/sim/faults.js';
import { NO_FAULTS } from '../../src/sim/knobs.js';
import { mulberry32 } from '../../src/random.js';

const sims: SimHandle[] = [];
async function sim(profile: string, personality: 'vllm' | 'bare' | 'llamacpp', overrides: SimProfileOverrides = {}): Promise<SimHandle> {
  const s = await startSim({ profile, personality, overrides: { stepBaseMs: 2, eosProbability: 0, ...overrides } });
  sims.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(sims.map((s) => s.close()));
  await closeControlAgent();
});

const options = (requestId: string) => ({ endpoint: 'chat' as const, timeouts: { headersMs: 5000, stallMs: 5000 }, requestId });

interface Truth {
  id: string;
  completionTokens: number;
  end: string;
}
async function truths(s: SimHandle): Promise<Truth[]> {
  return (await (await fetch(`${s.url}/_sim/truth`)).json()) as Truth[];
}

describe('confirmDetection', () => {
  test('a real engine (vllm personality) is confirmed: the same detection, no note, one short request', async () => {
    const s = await sim('tiny', 'vllm');
    const target: HttpTarget = { baseUrl: s.url };
    const detected = await detectEngine(target);
    expect(detected).toEqual({ kind: 'vllm', evidence: 'GET /v1/models owned_by: vllm' });
    const confirmed = await confirmDetection(target, detected, options('c1'));
    expect(confirmed).toEqual(detected);
    const sent = (await truths(s)).filter((t) => t.id.startsWith('c1'));
    expect(sent.map((t) => [t.id, t.completionTokens, t.end])).toEqual([['c1-vllm', CONFIRM_MAX_TOKENS, 'done']]);
  });

  test('a gateway relaying owned_by "vllm" that refuses vLLM fields: detected vllm, not confirmed, generic adapter with a note', async () => {
    const s = await sim('bare', 'bare', { wire: { ownedBy: 'vllm', strictFields: true } });
    const target: HttpTarget = { baseUrl: s.url };
    const detected = await detectEngine(target);
    expect(detected.kind).toBe('vllm');
    const confirmed = await confirmDetection(target, detected, options('c2'));
    expect(confirmed.kind).toBe('openai');
    expect(confirmed.evidence).toContain('GET /v1/models owned_by: vllm');
    expect(confirmed.note).toMatch(/detection picked vllm .* a streamed request through the vllm adapter failed \(HTTP 400: Unrecognized request argument supplied: ignore_eos/);
    expect(confirmed.note).toContain('using the generic OpenAI-compatible adapter');
    expect(confirmed.note).toContain('LLM_BENCH_ENGINE');
    // the generic adapter's request was served to its finish (the bare stream ends by the close)
    const sent = (await truths(s)).filter((t) => t.id.startsWith('c2'));
    expect(sent.map((t) => [t.id, t.end])).toEqual([['c2-openai', 'done']]);
  });

  test('a server that answers Ollama /api/tags and /api/version is detected as ollama; the ollama adapter speaks the generic wire, so it is confirmed', async () => {
    // Ollama's adapter streams /v1/chat/completions with standard fields only, exactly as the
    // generic adapter does: on this server its request works, so there is nothing to fall back from
    const s = await sim('bare', 'bare', { wire: { ollamaVersion: true } });
    const target: HttpTarget = { baseUrl: s.url };
    const detected = await detectEngine(target);
    expect(detected).toEqual({ kind: 'ollama', evidence: 'GET /api/version answered' });
    const confirmed = await confirmDetection(target, detected, options('c3'));
    expect(confirmed).toEqual(detected);
    // and the same server refusing what only Ollama's adapter would never send is still confirmed
    const strict = await sim('bare', 'bare', { wire: { ollamaVersion: true, strictFields: true } });
    const t2: HttpTarget = { baseUrl: strict.url };
    expect(await confirmDetection(t2, await detectEngine(t2), options('c3s'))).toEqual(detected);
  });

  test('the bare personality as it is (only /api/tags) is not taken for Ollama: generic adapter, no confirmation request', async () => {
    const s = await sim('bare', 'bare');
    const target: HttpTarget = { baseUrl: s.url };
    const detected = await detectEngine(target);
    expect(detected.kind).toBe('openai');
    expect(await confirmDetection(target, detected, options('c4'))).toBe(detected);
    expect((await truths(s)).filter((t) => t.id.startsWith('c4'))).toEqual([]);
  });

  test('a refused API key keeps the detection without a note or the generic try: the warm-up stops on the key (open.ts)', async () => {
    // llama.cpp with --api-key leaves /v1/models open (detection reads it) and guards the completions
    const s = await sim('tiny', 'llamacpp', { wire: { apiKey: 'sk-confirm-key' } });
    const target: HttpTarget = { baseUrl: s.url };
    const detected = await detectEngine(target);
    expect(detected.kind).toBe('llamacpp');
    expect(await confirmDetection(target, detected, options('c6'))).toEqual(detected);
    // with the key, the streamed request confirms it
    expect(await confirmDetection({ ...target, apiKey: 'sk-confirm-key' }, detected, options('c7'))).toEqual(detected);
  });

  test('when both adapters fail, the detected one is kept and the note says both failed', async () => {
    const s = await sim('tiny', 'vllm', { faults: { http500Rate: 1 } });
    const target: HttpTarget = { baseUrl: s.url };
    const detected = await detectEngine(target);
    const confirmed = await confirmDetection(target, detected, options('c5'));
    expect(confirmed.kind).toBe('vllm');
    expect(confirmed.evidence).toBe(detected.evidence);
    expect(confirmed.note).toMatch(/failed through the vllm adapter \(HTTP 500: .*\) and through the generic OpenAI-compatible one \(HTTP 500: .*\); keeping vllm/);
  });
  test('a server error on the first request is tried once more before the generic adapter (a flaky server keeps its engine)', async () => {
    // the sim draws each request's faults from its X-Request-Id: pick an id whose first request
    // draws the 500 and whose second does not
    const rates = { ...NO_FAULTS, http500Rate: 0.5 };
    const fails = (id: string): boolean => drawFaults(rates, mulberry32(requestSeed(1, id))).status === 500;
    let prefix: string | undefined;
    for (let i = 0; i < 200 && prefix === undefined; i++) if (fails(`f${i}-vllm`) && !fails(`f${i}-again-vllm`)) prefix = `f${i}`;
    expect(prefix).toBeDefined();
    const s = await sim('tiny', 'vllm', { faults: { http500Rate: 0.5 } });
    const target: HttpTarget = { baseUrl: s.url };
    const detected = await detectEngine(target);
    expect(await confirmDetection(target, detected, options(prefix!))).toEqual(detected);
    const sent = (await truths(s)).filter((t) => t.id.startsWith(prefix!));
    expect(sent.map((t) => t.id)).toEqual([`${prefix}-again-vllm`]);
  });
});

describe('openRun', () => {
  test('the embedded simulator openRun starts is not confirmed (its personality is known)', { timeout: 30_000 }, async () => {
    const cfg = resolveSuite({ target: { simProfile: 'tiny' }, matrix: { contexts: [0], concurrency: [1], prefill: [], windowS: 1, maxOutputTokens: 8 } }, {});
    const opened = await openRun(cfg);
    try {
      expect(opened.sim).toBeDefined();
      expect(opened.session.adapter.kind).toBe('vllm');
      expect((await truths(opened.sim!)).filter((t) => t.id.includes('-confirm'))).toEqual([]);
    } finally {
      await opened.close();
    }
  });

  const cfgFor = (url: string, engine?: 'vllm') =>
    resolveSuite({ target: { url, ...(engine ? { engine } : {}) }, matrix: { contexts: [0], concurrency: [1], prefill: [], windowS: 1, maxOutputTokens: 8 } }, {});

  test('auto-detection that is not confirmed: the run opens on the generic adapter and carries the note', { timeout: 30_000 }, async () => {
    const s = await sim('tiny', 'vllm', { wire: { strictFields: true } });
    const opened = await openRun(cfgFor(s.url));
    try {
      expect(opened.session.adapter.kind).toBe('openai');
      expect(opened.detectionNote).toMatch(/a streamed request through the vllm adapter failed \(HTTP 400: Unrecognized request argument supplied: ignore_eos/);
      expect(opened.detection).toContain('not confirmed');
      const ids = (await truths(s)).map((t) => t.id);
      // the vllm adapter's request was refused before the engine (no truth record); the generic one was served
      expect(ids.filter((id) => id.includes('-confirm-'))).toEqual([`${opened.session.runId}-confirm-openai`]);
    } finally {
      await opened.close();
    }
  });

  test('an engine the user set is never confirmed (no extra request; a failure is the warm-up\'s)', { timeout: 30_000 }, async () => {
    const s = await sim('tiny', 'vllm');
    const opened = await openRun(cfgFor(s.url, 'vllm'));
    try {
      expect(opened.session.adapter.kind).toBe('vllm');
      expect(opened.detectionNote).toBeUndefined();
      expect((await truths(s)).filter((t) => t.id.includes('-confirm'))).toEqual([]);
    } finally {
      await opened.close();
    }
  });

  test('a confirmed detection opens as before, with no note', { timeout: 30_000 }, async () => {
    const s = await sim('tiny', 'llamacpp');
    const opened = await openRun(cfgFor(s.url));
    try {
      expect(opened.session.adapter.kind).toBe('llamacpp');
      expect(opened.detectionNote).toBeUndefined();
      expect(opened.detection).toBe('GET /v1/models owned_by: llamacpp');
    } finally {
      await opened.close();
    }
  });
});
