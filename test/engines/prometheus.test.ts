import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { meanMetric, parsePrometheus, parseSampleLine, readLabels, sumMetric, sumMetricOverReplicas, filterIfPresent } from '../../src/engines/prometheus.js';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/engines/${name}`, import.meta.url), 'utf8');

describe('parseSampleLine', () => {
  test('plain, labelled, timestamped', () => {
    expect(parseSampleLine('up 1')).toEqual({ name: 'up', labels: {}, value: 1 });
    expect(parseSampleLine('a:b_c{x="1",y="two"} 2.5e3 1700000000000')).toEqual({
      name: 'a:b_c',
      labels: { x: '1', y: 'two' },
      value: 2500,
      timestamp: 1700000000000,
    });
  });
  test('escaped quotes, backslashes, newlines, commas and braces inside values; trailing comma; spaces', () => {
    const s = parseSampleLine('m{path="C:\\\\dir",msg="say \\"hi\\", then\\nbye",set="{a,b}",} 3');
    expect(s).toEqual({ name: 'm', labels: { path: 'C:\\dir', msg: 'say "hi", then\nbye', set: '{a,b}' }, value: 3 });
    expect(parseSampleLine('m { a = "1" , b="2" }   7  ')).toEqual({ name: 'm', labels: { a: '1', b: '2' }, value: 7 });
  });
  test('+Inf, -Inf, NaN', () => {
    expect(parseSampleLine('h_bucket{le="+Inf"} +Inf')?.value).toBe(Infinity);
    expect(parseSampleLine('g -Inf')?.value).toBe(-Infinity);
    expect(parseSampleLine('g NaN')?.value).toBeNaN();
  });
  test('malformed lines', () => {
    for (const bad of ['', '9abc 1', 'm{a="1"', 'm{a=1} 2', 'm{a="x} 1', 'm', 'm abc', 'm 1 2 3', 'm{="1"} 2', 'm 1 notatime']) {
      expect(parseSampleLine(bad), bad).toBeUndefined();
    }
  });
});

describe('parsePrometheus + reductions', () => {
  test('vLLM fixture', () => {
    const { samples, types, skippedLines } = parsePrometheus(fixture('vllm-metrics.txt'));
    expect(skippedLines).toBe(0);
    expect(types['vllm:num_requests_running']).toBe('gauge');
    expect(types['vllm:time_to_first_token_seconds']).toBe('histogram');
    expect(sumMetric(samples, ['vllm:num_requests_running'])).toBe(5);
    // counter names match with or without _total
    expect(sumMetric(samples, ['vllm:prompt_tokens'])).toBe(1500);
    expect(sumMetric(samples, ['vllm:prompt_tokens_total'])).toBe(1500);
    expect(sumMetric(samples, ['vllm:generation_tokens_total'], { engine: '1' })).toBe(2048);
    // first name that exists wins (new name, then fallback)
    expect(meanMetric(samples, ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'])).toBeCloseTo(0.375, 10);
    expect(meanMetric(samples, ['vllm:gpu_cache_usage_perc', 'vllm:kv_cache_usage_perc'])).toBeCloseTo(0.375, 10);
    expect(sumMetric(samples, ['nope'])).toBeUndefined();
    expect(readLabels(samples, 'vllm:cache_config_info')).toMatchObject({ block_size: '16', num_gpu_blocks: '2048' });
    expect(readLabels(samples, 'vllm:nothing')).toBeUndefined();
    expect(filterIfPresent(samples, ['vllm:num_requests_running'], 'model_name', 'tiny-model')).toEqual({ model_name: 'tiny-model' });
    expect(filterIfPresent(samples, ['vllm:num_requests_running'], 'model_name', 'other')).toBeUndefined();
  });
  test('CRLF line ends, comments, blank lines, NaN samples ignored by sums', () => {
    const text = '# a comment\r\n\r\n# TYPE x gauge\r\nx{r="0"} 1\r\nx{r="1"} NaN\r\nx{r="2"} 2\r\n# EOF\r\n';
    const { samples, skippedLines } = parsePrometheus(text);
    expect(samples).toHaveLength(3);
    expect(skippedLines).toBe(0);
    expect(sumMetric(samples, ['x'])).toBe(3);
    expect(meanMetric(samples, ['x'])).toBe(1.5);
  });
  test('garbage is counted, not thrown', () => {
    const r = parsePrometheus('<html>oops</html>\nok 1\n');
    expect(r.samples).toEqual([{ name: 'ok', labels: {}, value: 1 }]);
    expect(r.skippedLines).toBe(1);
  });

  test('replicas (tp/pp ranks of one dp rank) count once; dp ranks add up', () => {
    const text = [
      'r{dp_rank="0",tp_rank="0",pp_rank="0"} 4',
      'r{dp_rank="0",tp_rank="1",pp_rank="0"} 4',
      'r{dp_rank="1",tp_rank="0",pp_rank="0"} 3',
      'r{dp_rank="1",tp_rank="1",pp_rank="0"} 3',
    ].join('\n');
    const { samples } = parsePrometheus(text);
    expect(sumMetric(samples, ['r'])).toBe(14);
    expect(sumMetricOverReplicas(samples, ['r'], ['tp_rank', 'pp_rank'])).toBe(7);
    expect(sumMetricOverReplicas(samples, ['none'], ['tp_rank'])).toBeUndefined();
  });
});
