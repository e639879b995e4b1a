/**
 * The SGLang H200 reference page's matrix at full size (5 contexts × 8 columns, 30 s windows, 4,096
 * max output tokens) run end to end against the embedded simulator with its `sglang-h200` profile,
 * every measured cell's figures against the simulator's own truth (issue 59, item 5). Not CI: about
 * 25 minutes on the 2-core VM; the figures of a run are in docs/accuracy.md ("The reference matrix
 * at full size").
 *
 *   npx tsx perf/reference-truth.ts [--profile sglang-h200] [--window 30] [--max-tokens 4096]
 *                                   [--contexts 8K,16K,32K,64K,123K] [--concurrency 1,2,4,8,16,32,64,128]
 *                                   [--overrides JSON]
 *
 * The scale benchmark's live stage (issue 59, item 2: a live 30 s cell against the simulator in its
 * own process, at the highest rate this machine delivers; docs/accuracy.md "Scale") is this script
 * on a wide tiny server: --profile tiny --overrides '{"maxRunningRequests":256,"kvCapacityTokens":4000000}'
 * --contexts 0 --concurrency 64,128,256 --max-tokens 1024.
 *
 * The simulator runs in a process of its own (`llm-speed-matrix sim`), the matrix as a user runs it
 * (`npx vitest bench --run` with LLM_BENCH_URL), under /usr/bin/time for its wall time and peak
 * RSS. Then GET /_sim/truth gives, for every request, when the simulator wrote each chunk and how
 * many tokens it carried; a cell's window is rebuilt from the truth (its end: the first request
 * the client aborted, as the simulator saw it; its start: that less the cell's measured time) and
 * its figures computed from the truth with the product's own definitions (src/metrics/). The
 * tolerances are the accuracy tests' (test/accuracy/timing.test.ts): total and per-request tok/s
 * within 2 %, TTFT and time-between-tokens medians within max(2 %, 1 ms).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { computeCellFigures } from '../src/metrics/figures.js';
import type { CellResult, SpeedMatrixResult } from '../src/shapes/result.js';
import { truthAsTimeline, type TruthJson } from '../test/accuracy/harness.js';
import { startSimProcess } from '../test/faults/helpers.js';
import { freePort } from '../test/helpers/nginx.js';

const root = fileURLToPath(new URL('..', import.meta.url));

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

interface Row {
  key: string;
  status: string;
  /** the median over the cell's first C requests (written at once) of when the simulator took each up, after the first (ms) */
  burstTakenUpMs?: number;
  checks: Array<{ figure: string; measured?: number; truth?: number; ok: boolean }>;
}

/** One cell's figures from the simulator's truth over the cell's own window, and each against the measured one. */
function compare(cell: CellResult, truth: readonly TruthJson[]): Row {
  const key = `${cell.contextLabel}/${cell.concurrency}`;
  const f = cell.figures!;
  const own = truth.filter((t) => new RegExp(`-c${cell.context}x${cell.concurrency}-w\\d+-r\\d+$`).test(t.id));
  const aborted = own.filter((t) => t.end === 'aborted' && t.endMs !== undefined).map((t) => t.endMs!);
  const checks: Row['checks'] = [];
  if (aborted.length === 0) return { key, status: cell.status, checks: [{ figure: 'window (no aborted request to end it)', ok: false }] };
  const we = aborted.reduce((a, b) => Math.min(a, b), Infinity);
  const ws = we - f.measuredForS * 1000;
  const t = computeCellFigures({ timelines: own.map((r) => truthAsTimeline(r, r.receivedMs)), windowStartMs: ws, windowEndMs: we, metricsSamples: [], ttftFrom: 'send', stallLimit: undefined });
  const within = (name: string, measured: number | undefined, truthValue: number | undefined, rel: number, absMs = 0): void => {
    const ok = measured !== undefined && truthValue !== undefined && Math.abs(measured - truthValue) <= Math.max(rel * Math.abs(truthValue), absMs);
    checks.push({ figure: name, ...(measured !== undefined ? { measured } : {}), ...(truthValue !== undefined ? { truth: truthValue } : {}), ok });
  };
  within('total tok/s', f.totalTokensPerSecond, t.totalTokensPerSecond, 0.02);
  within('per-request tok/s', f.perRequestTokensPerSecond, t.perRequestTokensPerSecond, 0.02);
  within('TBT median ms', f.timeBetweenTokensMs?.median, t.timeBetweenTokensMs?.median, 0.02, 1);
  within('TTFT median ms', f.ttftMs?.median, t.ttftMs?.median, 0.02, 1);
  // the first request of each worker is the burst the client writes at once: how long the
  // simulator's one event loop took to take each of them up (its truth starts there)
  const burst = own.filter((r) => /-r0$/.test(r.id)).map((r) => r.receivedMs);
  const first = burst.reduce((a, b) => Math.min(a, b), Infinity);
  const taken = burst.map((x) => x - first).sort((a, b) => a - b);
  return { key, status: cell.status, checks, burstTakenUpMs: taken.length > 0 ? taken[Math.floor((taken.length - 1) / 2)]! : 0 };
}

async function main(): Promise<void> {
  const profile = arg('profile', 'sglang-h200');
  const windowS = arg('window', '30');
  const port = await freePort();
  const overrides = arg('overrides', '');
  const sim = await startSimProcess(port, profile, 30_000, overrides ? ['--overrides', overrides] : []);
  try {
    const url = `http://127.0.0.1:${port}`;
    const out = mkdtempSync(join(tmpdir(), 'lsm-reference-'));
    const env = {
      ...process.env,
      LLM_BENCH_URL: url,
      LLM_BENCH_CONTEXTS: arg('contexts', '8K,16K,32K,64K,123K'),
      LLM_BENCH_CONCURRENCY: arg('concurrency', '1,2,4,8,16,32,64,128'),
      LLM_BENCH_PREFILL: 'none',
      LLM_BENCH_DURATION_S: windowS,
      LLM_BENCH_MAX_TOKENS: arg('max-tokens', '4096'),
      LLM_BENCH_OUT: out,
      LLM_BENCH_THRESHOLDS: join(out, 'thresholds.json'),
      LLM_BENCH_COLUMNS: 'all',
      NO_COLOR: '1',
    };
    console.log(`simulator ${profile}${overrides ? ` with ${overrides}` : ''} at ${url}; the matrix writes to ${out}`);
    const bench = spawnSync('/usr/bin/time', ['-f', 'TIME %e s wall, %M KiB peak RSS (largest process)', 'npx', 'vitest', 'bench', '--run'], { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 2 ** 20 });
    const said = `${bench.stdout}\n${bench.stderr}`;
    for (const line of said.split('\n')) if (/^\[speed-matrix\] (\S+\/\d+: |finished|wrote)|^TIME /.test(line)) console.log(line);
    const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    const truth = (await (await fetch(`${url}/_sim/truth`)).json()) as TruthJson[];
    const rows = result.cells.filter((c) => c.figures && c.status !== 'over-capacity' && c.status !== 'not-run').map((c) => compare(c, truth));
    console.log('\n| cell | status | total tok/s (truth) | per-request tok/s (truth) | TBT median ms (truth) | TTFT median ms (truth) | within | burst taken up, median ms |');
    console.log('|---|---|---|---|---|---|---|---|');
    const show = (c?: Row['checks'][number]) => (c?.measured !== undefined && c.truth !== undefined ? `${c.measured.toFixed(1)} (${c.truth.toFixed(1)})${c.ok ? '' : ' ✗'}` : '—');
    for (const r of rows) console.log(`| ${r.key} | ${r.status} | ${r.checks.map(show).join(' | ')} | ${r.checks.every((c) => c.ok) ? 'yes' : 'no'} | ${(r.burstTakenUpMs ?? 0).toFixed(1)} |`);
    const over = result.cells.filter((c) => c.status === 'over-capacity').map((c) => `${c.contextLabel}/${c.concurrency}`);
    const bad = rows.filter((r) => !r.checks.every((c) => c.ok));
    console.log(`\n${rows.length} cells measured, ${rows.length - bad.length} within every tolerance; Over capacity (not run): ${over.join(', ') || 'none'}; exit ${bench.status}`);
    process.exitCode = bad.length === 0 && bench.status === 0 ? 0 : 1;
  } finally {
    sim.kill('SIGTERM');
  }
}

await main();
