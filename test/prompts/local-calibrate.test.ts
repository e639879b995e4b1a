/**
 * Prompt sizing with a local tokenizer when the server has no tokenize endpoint: against the sim
 * (usage reported: the chat template's tokens come from one usage reading) and against a small
 * fake server with no tokenize endpoint and no usage (content only; without a local tokenizer the
 * run stops with an error naming LLM_BENCH_TOKENIZER).
 * NOTE: the end-to-end run against the sim's `bare` personality is the lead's to add on merge.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { getAdapter } from '../../src/engines/detect.js';
import { asNumber, asRecord, closeControlAgent, postJson } from '../../src/engines/http.js';
import type { HttpTarget, ServerFacts } from '../../src/shapes/engine.js';
import { ConfigError } from '../../src/errors.js';
import { PromptCalibrator } from '../../src/prompts/calibrate.js';
import { ConnectionPolicy } from '../../src/client/connections.js';
import type { LoadSession } from '../../src/load/session.js';
import { RunPrompts } from '../../src/matrix/prompts.js';
import { countTokens } from '../../src/sim/tokenizer.js';
import { runSingleRequest } from '../../src/load/prefill.js';
import { usageDisagreement } from '../../src/metrics/usage-check.js';
import { simTokenizerJson } from '../../src/sim/tokenizer-json.js';
import { localTokenizerFromJson } from '../../src/tokenizer/local.js';

const local = localTokenizerFromJson(simTokenizerJson());
let sim: SimHandle;
/** streams "hi the " (2 sim tokens) in one chunk, "you " in the next, then [DONE]; no usage (unless doubleUsage), no tokenize endpoint */
let bare: Server;
let bareUrl: string;
let bareRequests = 0;
let doubleUsage = false;

beforeAll(async () => {
  sim = await startSim({ profile: 'tiny', personality: 'vllm' });
  bare = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/chat/completions') {
        bareRequests++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // two tokens in one chunk, then one; a final usage that says twice the streamed tokens when asked (?usage)
        res.write('data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n');
        res.write('data: {"choices":[{"index":0,"delta":{"content":"hi the "}}]}\n\n');
        res.write('data: {"choices":[{"index":0,"delta":{"content":"you "},"finish_reason":"length"}]' + (doubleUsage ? ',"usage":{"prompt_tokens":9,"completion_tokens":6}' : '') + '}\n\n');
        res.end('data: [DONE]\n\n');
      } else {
        res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
  bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await sim.close();
  await new Promise<void>((r) => bare.close(() => r()));
  await closeControlAgent();
});

async function simPromptTokens(target: HttpTarget, model: string, text: string): Promise<number> {
  const res = await postJson(target, '/v1/chat/completions', { model, messages: [{ role: 'user', content: text }], max_tokens: 1 }, { timeoutMs: 60_000 });
  const n = asNumber(asRecord(asRecord(res.json)?.usage)?.prompt_tokens);
  if (n === undefined) throw new Error(`no usage.prompt_tokens: ${res.text.slice(0, 200)}`);
  return n;
}

describe('calibration with a local tokenizer, no tokenize endpoint', () => {
  it('with server usage: the template tokens are measured once and the prompt lands exactly as the server counts it', async () => {
    const adapter = getAdapter('vllm');
    const target = { baseUrl: sim.url };
    const probed = await adapter.probe(target);
    const { tokenizePath: _dropped, ...facts } = probed; // as if the server had no tokenize endpoint
    let usageCalls = 0;
    const cal = PromptCalibrator.forAdapter({
      adapter,
      target,
      facts,
      endpoint: 'chat',
      localTokenizer: local,
      measurePromptTokens: (t) => {
        usageCalls++;
        return simPromptTokens(target, facts.model.value, t);
      },
    });
    expect(cal.mode).toBe('exact');
    for (const N of [300, 2048]) {
      const p = await cal.calibrate({ targetTokens: N, prefix: `Run loc, context ${N}.` });
      expect(p).toMatchObject({ mode: 'exact', countedBy: 'local-tokenizer', promptTokens: N });
      expect(p.templateTokens).toBeGreaterThan(0);
      expect(await simPromptTokens(target, facts.model.value, p.text)).toBe(N); // the server agrees
    }
    expect(usageCalls).toBe(1); // one usage reading for the template, then local counts only
  });

  it('without usage: the content alone is sized exactly and the record says so (no templateTokens)', async () => {
    const cal = PromptCalibrator.forAdapter({
      adapter: getAdapter('openai'),
      target: { baseUrl: bareUrl },
      facts: { engine: { value: 'openai', source: 'test' }, model: { value: 'm', source: 'test' } } as ServerFacts,
      endpoint: 'chat',
      localTokenizer: local,
      measurePromptTokens: async () => {
        throw new ConfigError('the server reported no usage.prompt_tokens');
      },
    });
    const p = await cal.calibrate({ targetTokens: 1000, prefix: 'Run bare, context 1000.' });
    expect(p).toMatchObject({ mode: 'exact', countedBy: 'local-tokenizer', promptTokens: 1000, withinTolerance: true });
    expect(p.templateTokens).toBeUndefined();
    expect(countTokens(p.text)).toBe(1000);
  });
});

describe('RunPrompts against a server with no tokenize endpoint and no usage', () => {
  const session = (withTokenizer: boolean): LoadSession => ({
    target: { baseUrl: bareUrl },
    adapter: getAdapter('openai'),
    facts: { engine: { value: 'openai', source: 'test' }, model: { value: 'm', source: 'test' } } as ServerFacts,
    model: 'm',
    endpoint: 'chat',
    maxOutputTokens: 16,
    timeouts: { headersMs: 5_000, stallMs: 5_000, unreachableRetryMs: 0 },
    runId: 'lsmtest',
    connections: new ConnectionPolicy(),
    hasMetrics: false,
    ...(withTokenizer ? { localTokenizer: local } : {}),
  });

  it('without a local tokenizer: stops with an error naming LLM_BENCH_TOKENIZER', async () => {
    const error = await new RunPrompts(session(false), 'shared').rowPrompt(1024, 16).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/prompts cannot be sized; set LLM_BENCH_TOKENIZER \(or target\.tokenizer\)/);
  });

  it('with one: the prompt is sized with it (one request tried for usage, then local counts)', async () => {
    const before = bareRequests;
    const p = await new RunPrompts(session(true), 'shared').rowPrompt(1024, 16);
    expect(p).toMatchObject({ countedBy: 'local-tokenizer', mode: 'exact' });
    expect(p.templateTokens).toBeUndefined();
    expect(countTokens(p.lead + p.text + p.tail)).toBe(p.promptTokens);
    expect(Math.abs(p.promptTokens - 1024)).toBeLessThanOrEqual(p.toleranceTokens);
    expect(bareRequests - before).toBe(1);
  });
});

describe('output tokens from the streamed text', () => {
  const session = (withTokenizer: boolean): LoadSession => ({
    target: { baseUrl: bareUrl },
    adapter: getAdapter('openai'),
    facts: { engine: { value: 'openai', source: 'test' }, model: { value: 'm', source: 'test' } } as ServerFacts,
    model: 'm',
    endpoint: 'chat',
    maxOutputTokens: 16,
    timeouts: { headersMs: 5_000, stallMs: 5_000, unreachableRetryMs: 0 },
    runId: 'lsmtest',
    connections: new ConnectionPolicy(),
    hasMetrics: false,
    ...(withTokenizer ? { localTokenizer: local } : {}),
  });

  it('a multi-token chunk is recounted with the local tokenizer; without one it counts 1', async () => {
    const withTok = await runSingleRequest(session(true), 'out-1', 'Hi', 16);
    // the load path compacts a finished request (client/compact.ts): typed arrays, the text dropped after the recount
    expect(withTok.tokenSource).toBe('local-tokenizer');
    expect(Array.from(withTok.chunkTokens)).toEqual([2, 1]);
    expect(withTok.chunkText).toBeUndefined();
    const without = await runSingleRequest(session(false), 'out-2', 'Hi', 16);
    expect(without.tokenSource).toBe('chunks');
    expect(Array.from(without.chunkTokens)).toEqual([1, 1]);
    expect(without.chunkText).toBeUndefined();
  });

  it('final usage twice the streamed tokens: flagged, and the counts stay the text', async () => {
    doubleUsage = true;
    try {
      const ts = [await runSingleRequest(session(true), 'out-3', 'Hi', 16), await runSingleRequest(session(true), 'out-4', 'Hi', 16)];
      expect(ts.map((t) => Array.from(t.chunkTokens))).toEqual([[2, 1], [2, 1]]);
      expect(ts[0]!.completionTokens).toBe(6);
      expect(usageDisagreement(ts)).toEqual({ requests: 2, of: 2, constant: false, example: { usage: 6, counted: 3 } });
    } finally {
      doubleUsage = false;
    }
  });
});
