/**
 * Launch args from the server (vLLM /server_info where exposed, SGLang /get_server_info) become a
 * redacted launch command on the page; llama.cpp slots show busy streams and the drain barrier
 * waits until aborted streams free them.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { closeControlAgent } from '../../src/engines/http.js';
import { LlamacppAdapter } from '../../src/engines/llamacpp.js';
import { waitForIdle } from '../../src/load/drain.js';
import type { LoadSession } from '../../src/load/session.js';
import { describeRun, openRun } from '../../src/matrix/open.js';
import { planMatrix } from '../../src/matrix/plan.js';
import { renderMarkdown } from '../../src/pages/markdown.js';
import { startSim } from '../../src/sim/index.js';
import { post } from '../sim/helpers.js';

afterAll(() => closeControlAgent());

describe('launch command from the server', () => {
  test.each(['vllm', 'sglang'] as const)('%s: server args → flags on the page, secrets redacted everywhere', async (personality) => {
    const sim = await startSim({ profile: 'tiny', personality, overrides: { serverArgs: { api_key: 'sk-SECRETarg', served_model_name: 'sim-tiny', enable_prefix_caching: true } } });
    const cfg = resolveSuite({ target: { url: sim.url, apiKey: 'sk-SECRETkey' }, matrix: { contexts: [0], concurrency: [1], prefill: [] } }, {});
    const opened = await openRun(cfg);
    try {
      const facts = opened.session.facts;
      expect(facts.launchArgs?.source).toBe(personality === 'vllm' ? 'GET /server_info vllm_config' : 'GET /get_server_info');
      expect(facts.maxRunningRequests?.value).toBe(8);
      const info = describeRun(cfg, opened, planMatrix(cfg.matrix, {}));
      expect(info.launchCommand).toMatch(/^# server arguments reported by GET \/(server_info vllm_config|get_server_info)\n/);
      expect(info.launchCommand).toContain('--api-key <redacted>');
      expect(info.launchCommand).toContain('--served-model-name sim-tiny');
      if (personality === 'vllm') expect(info.launchCommand).toContain('--max-num-seqs 8');
      const md = renderMarkdown({ schemaVersion: 2, info, prefill: [], cells: [], partial: true });
      const json = JSON.stringify(info);
      for (const text of [md, json]) expect(text).not.toContain('SECRET');
      expect(md).toContain('### Launch command');
    } finally {
      await opened.close();
      await sim.close();
    }
  });
});

describe('llama.cpp slots: busy streams, abort, drain', () => {
  test('busy slots count as running; aborted streams free them and the drain barrier passes', async () => {
    const sim = await startSim({ profile: 'tiny', personality: 'llamacpp', overrides: { stepBaseMs: 5 } });
    try {
      const adapter = new LlamacppAdapter();
      const target = { baseUrl: sim.url };
      const facts = await adapter.probe(target);
      const session = { target, adapter, facts } as unknown as LoadSession;
      const body = { messages: [{ role: 'user', content: 'go' }], max_tokens: 2000, ignore_eos: true, stream: true };
      const streams = [0, 1, 2].map(() => post(sim.url, '/v1/chat/completions', body, { abortAfterEvents: 15 }));
      let running = 0;
      for (let i = 0; i < 200 && running < 3; i++) {
        running = (await adapter.readMetrics(target, facts))?.running ?? 0;
        if (running < 3) await new Promise((r) => setTimeout(r, 5));
      }
      expect(running).toBe(3);
      await Promise.all(streams); // each client closes its stream after 15 events: llama.cpp cancels the task
      const drain = await waitForIdle(session, 5000);
      expect(drain).toMatchObject({ timedOut: false, checked: true, last: { running: 0, waiting: 0 } });
    } finally {
      await sim.close();
    }
  });
});
