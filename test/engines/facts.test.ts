import { describe, expect, test } from 'vitest';
import { sglangServerInfoFacts } from '../../src/engines/sglang.js';
import { vllmCacheFacts } from '../../src/engines/vllm.js';
import { parsePrometheus } from '../../src/engines/prometheus.js';
import { parseModelsList } from '../../src/engines/openai.js';

describe('fact extraction', () => {
  test('SGLang server info: nested server_args, internal_states fallback for max running requests', () => {
    const f = sglangServerInfoFacts(
      { server_args: { model_path: 'x', max_running_requests: null, page_size: 1 }, internal_states: [{ max_running_requests: 64 }], max_total_num_tokens: 1000, version: '0.5.4' },
      'GET /server_info',
    );
    expect(f.launchArgs).toEqual({ value: { model_path: 'x', max_running_requests: null, page_size: 1 }, source: 'GET /server_info server_args' });
    expect(f.maxRunningRequests).toEqual({ value: 64, source: 'GET /server_info internal_states[0].max_running_requests' });
    expect(f.kvCapacityTokens?.value).toBe(1000);
    expect(f.blockSize?.value).toBe(1);
    expect(sglangServerInfoFacts('nope', 's')).toEqual({});
  });
  test('vLLM cache_config_info: blocks × block size; missing or None values give nothing', () => {
    const s = parsePrometheus('vllm:cache_config_info{block_size="16",num_gpu_blocks="None",engine="0"} 1\n').samples;
    expect(vllmCacheFacts(s)).toEqual({ blockSize: { value: 16, source: 'vllm:cache_config_info block_size' } });
    expect(vllmCacheFacts([])).toEqual({});
  });
  test('models list: bad entries skipped, optional fields read', () => {
    expect(parseModelsList({ data: [{ id: 'a', owned_by: 'vllm', max_model_len: 100 }, { nope: 1 }, 'x', { id: 'b', max_model_len: -1 }] })).toEqual([
      { id: 'a', ownedBy: 'vllm', maxModelLen: 100 },
      { id: 'b' },
    ]);
    expect(parseModelsList(null)).toEqual([]);
  });
});
