import { createServer } from 'node:net';
import { expect, test } from 'vitest';
import { parseSimArgs, runSimCli, startSimCli } from '../../src/sim/cli.js';
import { startSim } from '../../src/sim/index.js';


test('parses --profile, --port, --host, --personality (also --flag=value)', () => {
  expect(parseSimArgs(['--profile', 'sglang-h200', '--port=0', '--host', '127.0.0.1', '--personality', 'vllm'])).toEqual({
    profile: 'sglang-h200',
    port: 0,
    host: '127.0.0.1',
    personality: 'vllm',
  });
  expect(() => parseSimArgs(['--port', 'abc'])).toThrow(/--port abc is invalid/);
  expect(() => parseSimArgs(['--what'])).toThrow(/unknown option "--what"/);
});

test('an unknown profile is a clear error listing the valid ones', async () => {
  await expect(runSimCli(['--profile', 'nope', '--port', '0'])).rejects.toThrow(/unknown sim profile "nope".*tiny, sglang-h200, vllm-arc-b65x4/);
  await expect(startSim({ profile: 'nope' })).rejects.toThrow(/unknown sim profile/);
});

test('a port in use is a clear error naming the port and the fix', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    await expect(runSimCli(['--profile', 'tiny', '--port', String(port)])).rejects.toThrow(
      `port ${port} is in use; pick another with --port or use --port 0`,
    );
    await expect(startSim({ port, thread: true })).rejects.toThrow(`port ${port} is in use`);
  } finally {
    blocker.close();
  }
});

test('serves and prints its URL', async () => {
  const lines: string[] = [];
  const sim = await startSimCli(['--profile', 'sglang-h200', '--port', '0'], (l) => lines.push(l));
  try {
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(lines.join(''))?.[1];
    expect(url).toBeDefined();
    const models = (await (await fetch(`${url}/v1/models`)).json()) as any;
    expect(models.data[0]).toMatchObject({ id: 'muse-glimmer', owned_by: 'sglang', max_model_len: 131072 });
    const info = (await (await fetch(`${url}/get_server_info`)).json()) as any;
    expect(info.max_total_num_tokens).toBe(1_441_792);
  } finally {
    await sim.close();
  }
});

test('--llamacpp-metrics and --llamacpp-slots: the llama.cpp personality serves today\'s names, or answers 501 as without --metrics / --slots', async () => {
  expect(parseSimArgs(['--personality', 'llamacpp', '--llamacpp-metrics', 'current', '--llamacpp-slots=off'])).toMatchObject({ llamacppMetrics: 'current', llamacppSlots: false });
  expect(() => parseSimArgs(['--llamacpp-metrics', 'b9999'])).toThrow(/--llamacpp-metrics b9999 is invalid: use one of b4748, current, off/);
  expect(() => parseSimArgs(['--llamacpp-slots', 'maybe'])).toThrow(/--llamacpp-slots maybe is invalid/);
  const urls: string[] = [];
  const said = (line: string) => urls.push(/listening on (\S+)/.exec(line)![1]!);
  const current = await startSimCli(['--personality', 'llamacpp', '--port', '0', '--llamacpp-metrics', 'current'], said);
  const off = await startSimCli(['--personality', 'llamacpp', '--port', '0', '--llamacpp-metrics', 'off', '--llamacpp-slots', 'off'], said);
  try {
    const [currentUrl, offUrl] = urls as [string, string];
    const text = await (await fetch(`${currentUrl}/metrics`)).text();
    expect(text).toContain('llamacpp:requests_processing');
    expect(text).toContain('llamacpp:prompt_tokens_cached_total');
    expect(text).not.toContain('n_decode_total');
    expect(text).not.toContain('n_busy_slots_per_decode');
    expect(text).not.toContain('kv_cache_usage_ratio');
    expect((await fetch(`${offUrl}/metrics`)).status).toBe(501);
    const slots = await fetch(`${offUrl}/slots`);
    expect(slots.status).toBe(501);
    expect(await slots.json()).toMatchObject({ error: { code: 501, type: 'not_supported_error' } });
  } finally {
    await current.close();
    await off.close();
  }
});

test('--overrides: profile fields as LLM_BENCH_SIM_OVERRIDES, checked the same way; the server serves them', async () => {
  expect(parseSimArgs(['--overrides', '{"maxRunningRequests":256,"kvCapacityTokens":4000000}']).overrides).toEqual({ maxRunningRequests: 256, kvCapacityTokens: 4_000_000 });
  expect(() => parseSimArgs(['--overrides', '{"maxRunningRequest":3}'])).toThrow(/--overrides: "maxRunningRequest" is not a simulator profile field; use one of .*maxRunningRequests/);
  expect(() => parseSimArgs(['--overrides', '{"maxRunningRequests":"many"}'])).toThrow(/--overrides: "maxRunningRequests" must be a number like the profile's \d+, got "many"/);
  expect(() => parseSimArgs(['--overrides', '{"maxRunningRequests":0}'])).toThrow(/--overrides: sim profile field maxRunningRequests = 0 is invalid/);
  expect(() => parseSimArgs(['--overrides', '[1]'])).toThrow(/--overrides must be a JSON object of simulator profile fields/);
  const lines: string[] = [];
  const sim = await startSimCli(['--profile', 'sglang-h200', '--port', '0', '--overrides', '{"kvCapacityTokens":2000000}'], (l) => lines.push(l));
  try {
    const url = /listening on (\S+)/.exec(lines.join(''))![1]!;
    const info = (await (await fetch(`${url}/get_server_info`)).json()) as { max_total_num_tokens: number };
    expect(info.max_total_num_tokens).toBe(2_000_000);
  } finally {
    await sim.close();
  }
});
