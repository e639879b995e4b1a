/**
 * Benchmark: run a simulator profile at its reference page's matrix and print measured against
 * the published page for every prefill row and cell.
 *
 *   npx tsx perf/reference.ts sglang-h200   [--window 5] [--reference ../shared/reference]
 *   npx tsx perf/reference.ts vllm-arc-b65x4
 *
 * Goals (issue 4): Over capacity cells match the page; Total tok/s within 15 % of the page for at
 * least 90 % of the vLLM page's Valid cells and 75 % of the SGLang page's. The SGLang page carries
 * load left over from earlier cells at 2 and 4 requests on rows from 16K up (Average active
 * requests far above the requested concurrency): those cells are named in the table, not imitated.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseContext } from '../src/shapes/labels.js';
import type { SpeedMatrixResult } from '../src/shapes/result.js';

const PAGES: Record<string, string> = {
  'sglang-h200': 'speed-matrix-sglang-h200-bf16.txt',
  'vllm-arc-b65x4': 'speed-matrix-vllm-arc-pro-b65x4-fp8.txt',
};

interface RefRow {
  phase: 'Prefill' | 'Sustained decode';
  context: string;
  concurrency: number;
  status: string;
  totalTokensPerSecond?: number;
  perRequestTokensPerSecond?: number;
  ttftMs?: number;
  averageActive?: number;
}

function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const t = s.trim();
  if (t === '—' || t === '') return undefined;
  const k = /^([\d.,]+)K$/.exec(t);
  if (k) return Number(k[1]!.replace(/,/g, '')) * 1000;
  const m = /^([\d.,]+)( ms| s)?$/.exec(t);
  return m ? Number(m[1]!.replace(/,/g, '')) : undefined;
}

/** Rows of the page's "All measurements" table. */
export function parseReferencePage(text: string): RefRow[] {
  const rows: RefRow[] = [];
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | Phase | Context | Requests at once | Status | Total | Per request | TTFT | TBT | Active | Completed | Output | Measured |
    if (cells.length < 13 || (cells[1] !== 'Prefill' && cells[1] !== 'Sustained decode')) continue;
    rows.push({
      phase: cells[1] as RefRow['phase'],
      context: cells[2]!,
      concurrency: Number(cells[3]),
      status: cells[4]!,
      totalTokensPerSecond: num(cells[5]),
      perRequestTokensPerSecond: num(cells[6]),
      ttftMs: num(cells[7]),
      averageActive: num(cells[9]),
    });
  }
  return rows;
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

function pct(measured: number | undefined, ref: number | undefined): string {
  if (measured === undefined || ref === undefined || ref === 0) return '—';
  const d = ((measured - ref) / ref) * 100;
  return `${d >= 0 ? '+' : ''}${d.toFixed(1)} %`;
}

function main(): void {
  const profile = process.argv[2] ?? 'sglang-h200';
  const page = PAGES[profile];
  if (!page) throw new Error(`unknown profile "${profile}"; use one of ${Object.keys(PAGES).join(', ')}`);
  const refDir = arg('reference', join(import.meta.dirname, '..', '..', 'shared', 'reference'));
  const ref = parseReferencePage(readFileSync(join(refDir, page), 'utf8'));
  const refDecode = ref.filter((r) => r.phase === 'Sustained decode');
  const contexts = [...new Set(refDecode.map((r) => r.context))];
  const concurrency = [...new Set(refDecode.map((r) => r.concurrency))];
  const prefill = ref.filter((r) => r.phase === 'Prefill').map((r) => r.context);
  const maxTokens = profile === 'sglang-h200' ? 4096 : 256;

  const out = mkdtempSync(join(tmpdir(), `lsm-ref-${profile}-`));
  const env = {
    ...process.env,
    LLM_BENCH_SIM_PROFILE: profile,
    LLM_BENCH_CONTEXTS: contexts.join(','),
    LLM_BENCH_CONCURRENCY: concurrency.join(','),
    LLM_BENCH_PREFILL: prefill.join(','),
    LLM_BENCH_MAX_TOKENS: String(maxTokens),
    LLM_BENCH_DURATION_S: arg('window', '5'),
    LLM_BENCH_OUT: out,
    LLM_BENCH_THRESHOLDS: join(out, 'no-thresholds.json'),
  };
  console.error(`running the ${profile} matrix (${contexts.length} × ${concurrency.length}, prefill ${prefill.join(', ')}) …`);
  const run = spawnSync('npx', ['vitest', 'bench', '--run'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
  if (run.status !== 0) console.error(`(the run exited ${run.status}; comparing what it measured)`);

  console.log(`\n### ${profile}: measured (simulator, ${env.LLM_BENCH_DURATION_S} s window) against the reference page\n`);
  console.log('| Phase | Context | Requests | Reference status | Measured status | Reference tok/s | Measured tok/s | Δ | Reference TTFT | Measured TTFT | Note |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of ref.filter((x) => x.phase === 'Prefill')) {
    const m = result.prefill.find((p) => p.contextLabel === r.context);
    const tps = m?.figures?.promptTokensPerSecond;
    console.log(
      `| Prefill | ${r.context} | 1 | ${r.status} | ${m?.status ?? 'missing'} | ${r.totalTokensPerSecond ?? '—'} | ${tps?.toFixed(0) ?? '—'} | ${pct(tps, r.totalTokensPerSecond)} | ${r.ttftMs ?? '—'} | ${m?.figures?.ttftMs.toFixed(0) ?? '—'} | |`,
    );
  }
  let overMatch = 0;
  let exactStatus = 0;
  let overTotal = 0;
  let validCells = 0;
  let within = 0;
  const artifacts: string[] = [];
  for (const r of refDecode) {
    const ctx = parseContext(r.context);
    const m = result.cells.find((c) => c.context === ctx && c.concurrency === r.concurrency);
    const refOver = r.status === 'Over capacity';
    const mOver = m?.status === 'over-capacity';
    overTotal++;
    if (refOver === mOver) overMatch++;
    if (m && r.status.toLowerCase().replace(/ /g, '-') === m.status) exactStatus++;
    const tps = m?.figures?.totalTokensPerSecond;
    // the SGLang page's leftover load from earlier cells (issue 4): at 2 and 4 requests on rows from
    // 16K up, Average active requests far exceed the concurrency and per-request speed drops
    const artifact = profile === 'sglang-h200' && ctx >= 16 * 1024 && (r.concurrency === 2 || r.concurrency === 4);
    let note = '';
    if (refOver !== mOver) note = 'STATUS MISMATCH';
    else if (artifact) {
      note = `page artifact: active ${r.averageActive} at ${r.concurrency} requests (leftover load), not imitated`;
      artifacts.push(`${r.context}/${r.concurrency}`);
    } else if (!refOver) {
      validCells++;
      const ok = tps !== undefined && r.totalTokensPerSecond !== undefined && Math.abs(tps - r.totalTokensPerSecond) <= 0.15 * r.totalTokensPerSecond;
      if (ok) within++;
      else note = 'outside 15 %';
    }
    console.log(
      `| Decode | ${r.context} | ${r.concurrency} | ${r.status} | ${m?.status ?? 'missing'} | ${r.totalTokensPerSecond ?? '—'} | ${tps?.toFixed(1) ?? '—'} | ${pct(tps, r.totalTokensPerSecond)} | ${r.ttftMs ?? '—'} | ${m?.figures?.ttftMs?.median.toFixed(0) ?? '—'} | ${note} |`,
    );
  }
  const share = validCells ? (within / validCells) * 100 : 0;
  const goal = profile === 'sglang-h200' ? 75 : 90;
  console.log(`\nOver capacity (not run) vs run matches the page: ${overMatch} of ${overTotal} cells; exact status matches: ${exactStatus} of ${overTotal}.`);
  console.log(
    `Total tok/s within 15 % of the page: ${within} of ${validCells} Valid cells (${share.toFixed(0)} %; goal ${goal} %)` +
      (artifacts.length ? `, excluding the page's leftover-load cells ${artifacts.join(', ')}.` : '.'),
  );
}

main();
