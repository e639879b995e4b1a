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
  expect(() => parseSimArgs(['--what'])).toThrow(/unknown option --what/);
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
