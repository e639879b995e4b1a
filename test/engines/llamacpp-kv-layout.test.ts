/**
 * llama.cpp's KV capacity where the slots may share one cache. Found on a real llama.cpp of
 * August 2026 (built from its public source, outside the repository) started as its README
 * starts it (`llama-server -m MODEL -c 8192`): 4 slots sharing 8,192 tokens (`kv_unified =
 * 'true'` in its log), while `/props` says n_ctx 8192 per slot as a server with a cache per slot
 * does. The tool read 32,768 tokens, ran 2K/4 with 512 output tokens (10,240 > 8,192) and got
 * 24 failed requests ("Context size has been exceeded.", every running slot dropped at once)
 * where the cell is Over capacity. Now:
 * - a server that may share its cache (b6925 on, or a build without a number whose /props has
 *   2025's fields) keeps n_ctx × total_slots (METHOD.md: when the budget is unknown, run the
 *   cell) and its source says what a shared cache holds and the setting to give;
 * - a server on this machine is settled by its command line (/proc): no `-np` or `-kvu` is a shared
 *   cache (n_ctx in all), `-np N` a cache per slot.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { closeControlAgent } from '../../src/engines/http.js';
import { kvLayoutFromArgs, LlamacppAdapter, llamacppPropsFacts, mayShareKvCache } from '../../src/engines/llamacpp.js';
import { openRun } from '../../src/matrix/open.js';
import { listeningInodes, listeningProcess, pickEnviron } from '../../src/meta/local-process.js';
import { startSim, type SimHandle } from '../../src/sim/index.js';

/** /props of llama.cpp b4748 (recorded: its keys and values) */
const B4748_PROPS = {
  default_generation_settings: { id: 0, n_ctx: 2048, params: {} },
  total_slots: 4,
  model_path: 'm.gguf',
  chat_template: '',
  bos_token: '<s>',
  eos_token: '</s>',
  build_info: 'b0-unknown',
};
/** /props of llama.cpp of August 2026 built without git (recorded keys; values of `-c 8192`, no -np) */
const PROPS_2026 = {
  default_generation_settings: { params: {}, n_ctx: 8192 },
  total_slots: 4,
  model_alias: 'm.gguf',
  model_ftype: 'F32',
  model_path: 'm.gguf',
  modalities: { vision: false, video: false, audio: false },
  media_marker: '<__media__>',
  endpoint_slots: true,
  endpoint_props: false,
  endpoint_metrics: true,
  is_sleeping: false,
  build_info: 'b0-unknown',
};

describe('which builds may share the cache', () => {
  test.each([
    ['b4748 (no build number, none of the 2025 fields)', B4748_PROPS, false],
    ['August 2026 without a build number', PROPS_2026, true],
    ['b6924, the build before shared caches', { ...PROPS_2026, build_info: 'b6924-abc' }, false],
    ['b6925', { ...PROPS_2026, build_info: 'b6925-abc' }, true],
    ['one slot (n_ctx either way)', { ...PROPS_2026, total_slots: 1 }, false],
  ])('%s', (_name, props, may) => {
    expect(mayShareKvCache(props)).toBe(may);
    const kv = llamacppPropsFacts(props).kvCapacityTokens!;
    // the larger figure in every case: no cell is held back that could run
    expect(kv.value).toBe(props.default_generation_settings.n_ctx * props.total_slots);
    if (may) expect(kv.source).toContain(`one the slots share (-kvu, its default when -np is not given) holds 8,192 in all: then set target.kvCapacityTokens to 8192`);
    else expect(kv.source).toBe('GET /props n_ctx × total_slots');
  });
});

describe("the layout from llama-server's command line and environment", () => {
  const none = {};
  test.each([
    ['no -np', ['/opt/llama/llama-server', '-m', 'm.gguf'], none, 8192, 4, { shared: true, why: 'has no -np' }],
    ['-np 4', ['llama-server', '-m', 'm.gguf', '-np', '4'], none, 2048, 4, { shared: false, why: 'has -np 4' }],
    ['--parallel=8', ['llama-server', '--parallel=8'], none, 2048, 8, { shared: false, why: 'has -np 8' }],
    ['-np 4 -kvu', ['llama-server', '-np', '4', '-kvu'], none, 8192, 4, { shared: true, why: 'has -kvu' }],
    ['--no_kv_unified (underscores)', ['llama-server', '--no_kv_unified'], none, 2048, 4, { shared: false, why: 'has -no-kvu' }],
    ['-np -1', ['llama-server', '-np', '-1'], none, 8192, 4, { shared: true, why: 'has -np -1 (auto)' }],
    ['-np 1 on 4 slots', ['llama-server', '-np', '1'], none, 8192, 4, { shared: true, why: 'has -np 1 and the server shows 4 slots sharing one cache' }],
    ['-np 1 on 1 slot', ['llama-server', '-np', '1'], none, 8192, 1, { shared: false, why: 'has -np 1' }],
    ['LLAMA_ARG_N_PARALLEL=4 (a container image)', ['llama-server', '-c', '9000'], { LLAMA_ARG_N_PARALLEL: '4' }, 2048, 4, { shared: false, why: 'has LLAMA_ARG_N_PARALLEL=4' }],
    ['LLAMA_ARG_KV_UNIFIED=1', ['llama-server', '-np', '4'], { LLAMA_ARG_KV_UNIFIED: '1' }, 8192, 4, { shared: true, why: 'has -kvu' }],
    ['-c 8192 and 8,192 a slot: the numbers', ['llama-server', '-c', '8192', '-np', '4'], none, 8192, 4, { shared: true, why: 'has -c 8192, and each of its 4 slots holds 8,192' }],
    ['-c 8192 and 2,048 a slot: the numbers', ['llama-server', '--ctx-size=8192'], none, 2048, 4, { shared: false, why: 'has -c 8192, and its 4 slots hold 2,048 each' }],
    ['LLAMA_ARG_CTX_SIZE and the numbers', ['llama-server'], { LLAMA_ARG_CTX_SIZE: '8192' }, 2048, 4, { shared: false, why: 'has -c 8192, and its 4 slots hold 2,048 each' }],
  ])('%s', (_name, argv, env, nCtx, slots, layout) => {
    expect(kvLayoutFromArgs(argv, env, nCtx, slots)).toEqual(layout);
  });

  test('nothing decides where the environment could not be read, or -np is not a number', () => {
    // LLAMA_ARG_N_PARALLEL may be set there: no -np on the command line settles nothing
    expect(kvLayoutFromArgs(['llama-server', '-m', 'm.gguf'], undefined, 8192, 4)).toBeUndefined();
    expect(kvLayoutFromArgs(['llama-server', '-np', '4'], undefined, 2048, 4)).toEqual({ shared: false, why: 'has -np 4' });
    expect(kvLayoutFromArgs(['llama-server', '-np', 'four'], {}, 2048, 4)).toBeUndefined();
  });

  test('the adapter reads the command line only for a server that may share its cache', async () => {
    const s = await startSim({ profile: 'tiny', personality: 'llamacpp', overrides: { stepBaseMs: 2 } });
    try {
      const adapter = new LlamacppAdapter();
      // the sim's /props is b4748's shape: a cache per slot whatever the command line
      const facts = await adapter.probe({ baseUrl: s.url });
      let asked = 0;
      const read = async () => (asked++, { pid: 7, argv: ['llama-server'], env: {} });
      expect(await adapter.factsFromCommandLine(read, facts)).toBeUndefined();
      expect(asked).toBe(0);
    } finally {
      await s.close();
      await closeControlAgent();
    }
  });
});

test('/proc/net/tcp: the listening sockets of a port, by inode', () => {
  const table = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:1F9A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 424242 1 0000000000000000 100 0 0 10 0',
    '   1: 0100007F:1F9A 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 434343 1 0000000000000000 20 4 30 10 -1',
    '   2: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 515151 1 0000000000000000 100 0 0 10 0',
  ].join('\n');
  // port 8090 = 0x1F9A: the listener only (state 0A), not the established connection
  expect(listeningInodes(table, 8090)).toEqual(['424242']);
  expect(listeningInodes(table, 80)).toEqual(['515151']);
  expect(listeningInodes(table, 8091)).toEqual([]);
  // tcp6: a 32-digit address, the same columns
  const table6 = [
    '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 00000000000000000000000001000000:1F9A 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 626262 1 0000000000000000 100 0 0 10 0',
  ].join('\n');
  expect(listeningInodes(table6, 8090)).toEqual(['626262']);
});

test('pickEnviron reads only the names asked for', () => {
  expect(pickEnviron('PATH=/bin\0LLAMA_API_KEY=secret\0LLAMA_ARG_N_PARALLEL=4\0', ['LLAMA_ARG_N_PARALLEL'])).toEqual({ LLAMA_ARG_N_PARALLEL: '4' });
});

/** a process named `llama-server` (argv[0]) relaying a port to the simulator, as a local llama.cpp server's listener */
async function llamaServerRelay(simPort: number, args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const relay = `const net = require('node:net');
const s = net.createServer((c) => { const u = net.connect(${simPort}, '127.0.0.1'); c.pipe(u); u.pipe(c); c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); });
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
  // without the LLAMA_ARG_* variables the layout reads (a caller's would change the answer)
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LLAMA_ARG_')));
  const child = spawn(process.execPath, ['-e', relay, '--', ...args], { argv0: 'llama-server', env, stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, port: Number(line.toString().trim()) };
}

describe.runIf(process.platform === 'linux')('a llama.cpp server on this machine (linux: /proc)', () => {
  const sims: SimHandle[] = [];
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) c.kill();
    await Promise.all(sims.map((s) => s.close()));
    await closeControlAgent();
  });
  // the sim's llama.cpp personality with a 2026 build number: 4 slots of 4,096 (kvCapacityTokens 16,384)
  const sim = async () => {
    const s = await startSim({ profile: 'tiny', personality: 'llamacpp', overrides: { stepBaseMs: 2, eosProbability: 0, version: '7433-test', maxRunningRequests: 4, kvCapacityTokens: 16_384 } });
    sims.push(s);
    return s;
  };
  const cfgFor = (url: string) => resolveSuite({ target: { url }, matrix: { contexts: [0], concurrency: [1], prefill: [], windowS: 1, maxOutputTokens: 8 } }, {});

  test('listeningProcess finds the process behind a port, with its argv and only the variables asked for', { timeout: 30_000 }, async () => {
    const s = await sim();
    const { child, port } = await llamaServerRelay(Number(new URL(s.url).port), ['-m', 'm.gguf', '-np', '4']);
    children.push(child);
    const found = await listeningProcess(port, { program: /^llama-server/, env: ['LLAMA_ARG_N_PARALLEL'] });
    expect(found?.pid).toBe(child.pid);
    expect(found?.argv[0]).toBe('llama-server');
    expect(found?.argv.slice(-4)).toEqual(['-m', 'm.gguf', '-np', '4']);
    expect(found?.env).toEqual({});
    // another program's name: not it
    expect(await listeningProcess(port, { program: /^vllm/ })).toBeUndefined();
  });

  test('no -np: the run reads one shared cache of n_ctx, naming the command line', { timeout: 30_000 }, async () => {
    const s = await sim();
    const { child, port } = await llamaServerRelay(Number(new URL(s.url).port), ['-m', 'm.gguf']);
    children.push(child);
    const opened = await openRun(cfgFor(`http://127.0.0.1:${port}`));
    try {
      const kv = opened.session.facts.kvCapacityTokens!;
      expect(kv.value).toBe(4096);
      expect(kv.source).toBe(`GET /props n_ctx: the 4 slots share one KV cache (the command line of the server's process, pid ${child.pid}, has no -np)`);
    } finally {
      await opened.close();
    }
  });

  test('-np 4: a cache per slot, n_ctx × total_slots', { timeout: 30_000 }, async () => {
    const s = await sim();
    const { child, port } = await llamaServerRelay(Number(new URL(s.url).port), ['-m', 'm.gguf', '-np', '4']);
    children.push(child);
    const opened = await openRun(cfgFor(`http://127.0.0.1:${port}`));
    try {
      expect(opened.session.facts.kvCapacityTokens).toEqual({ value: 16_384, source: `GET /props n_ctx × total_slots: a KV cache per slot (the command line of the server's process, pid ${child.pid}, has -np 4)` });
    } finally {
      await opened.close();
    }
  });
});
