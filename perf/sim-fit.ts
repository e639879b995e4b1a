/**
 * Fits check: runs the sim's engine model (src/sim/engine-model.ts) in virtual time (test/helpers/virtual-cell.ts)
 * through the same sequence as the reference pages (METHOD.md): cold prefill rows, then per cell a
 * scout request, C closed-loop workers, a readiness gate, a 30 s window. Prints sim vs page for
 * every figure.
 *
 *   npx tsx perf/sim-fit.ts [sglang-h200|vllm-arc-b65x4|all]
 */

import { getSimProfile, type SimProfile } from '../src/sim/profiles.js';
import { runVirtualCell, textTokens, VirtualEngine } from '../test/helpers/virtual-cell.js';

interface PageCell {
  ctxK: number;
  c: number;
  /** page figures; undefined = Over capacity */
  tbtMs?: number;
  ttftMs?: number;
  totalTokS?: number;
  /** cells with leftover-load artifacts (not fitted) */
  artifact?: boolean;
}
interface Page {
  profile: string;
  maxOut: number;
  prefill: [number, number, number][]; // ctxK, tok/s, ttft ms
  cells: PageCell[];
}

const SGLANG: Page = {
  profile: 'sglang-h200',
  maxOut: 4096,
  prefill: [[8, 10400, 790], [16, 10200, 1590], [32, 9995, 3218], [64, 9412, 6815], [123, 8474, 14523], [128, 8489, 15087]],
  cells: [
    ...[[1, 16.8, 122, 59.3], [2, 17.5, 186, 114.2], [4, 18.0, 200, 221.9], [8, 17.5, 294, 455.3], [16, 18.6, 422, 857.3], [32, 20.2, 786, 1583.9], [64, 24.4, 1458, 2616.6]].map(([c, t, f, s]) => ({ ctxK: 8, c: c!, tbtMs: t, ttftMs: f, totalTokS: s })),
    { ctxK: 8, c: 128 },
    ...[[1, 16.8, 147, 59.3], [2, 23.8, 238, 84.3, 1], [4, 21.5, 296, 187.7, 1], [8, 17.8, 402, 448.1], [16, 19.3, 772, 826.3], [32, 20.9, 1610, 1510.1], [64, 25.9, 3176, 2405.5]].map(([c, t, f, s, a]) => ({ ctxK: 16, c: c!, tbtMs: t, ttftMs: f, totalTokS: s, artifact: a === 1 })),
    { ctxK: 16, c: 128 },
    ...[[1, 16.9, 198, 59.1], [2, 26.4, 316, 75.8, 1], [4, 24.6, 475, 162.6, 1], [8, 18.5, 898, 429.8], [16, 20.4, 1629, 771.9], [32, 22.4, 3244, 1378.7]].map(([c, t, f, s, a]) => ({ ctxK: 32, c: c!, tbtMs: t, ttftMs: f, totalTokS: s, artifact: a === 1 })),
    { ctxK: 32, c: 64 }, { ctxK: 32, c: 128 },
    ...[[1, 17.0, 304, 58.7], [2, 23.1, 517, 86.6, 1], [4, 20.9, 906, 192.6, 1], [8, 19.2, 1811, 409.7], [16, 22.4, 3354, 686.8]].map(([c, t, f, s, a]) => ({ ctxK: 64, c: c!, tbtMs: t, ttftMs: f, totalTokS: s, artifact: a === 1 })),
    { ctxK: 64, c: 32 }, { ctxK: 64, c: 64 }, { ctxK: 64, c: 128 },
    ...[[1, 17.2, 531, 58.0], [2, 22.4, 968, 89.3, 1], [4, 21.1, 1650, 188.9, 1], [8, 20.7, 3139, 374.3]].map(([c, t, f, s, a]) => ({ ctxK: 123, c: c!, tbtMs: t, ttftMs: f, totalTokS: s, artifact: a === 1 })),
    { ctxK: 123, c: 16 }, { ctxK: 123, c: 32 }, { ctxK: 123, c: 64 }, { ctxK: 123, c: 128 },
  ],
};

const VLLM: Page = {
  profile: 'vllm-arc-b65x4',
  maxOut: 256,
  prefill: [[8, 2709, 3025], [32, 2645, 12162], [64, 2550, 25157]],
  cells: [
    [0, 1, 27.2, 103, 36.3], [0, 2, 28.6, 149, 68.7], [0, 4, 28.8, 184, 136.0], [0, 8, 30.1, 250, 258.4], [0, 16, 31.9, 414, 476.4],
    [8, 1, 27.5, 127, 35.9], [8, 2, 28.9, 160, 68.1], [8, 4, 29.1, 186, 134.5], [8, 8, 31.2, 194, 250.6], [8, 16, 33.3, 304, 466.5],
    [32, 1, 27.8, 179, 35.3], [32, 2, 29.3, 210, 66.7], [32, 4, 30.2, 264, 128.4], [32, 8, 32.2, 339, 240.3], [32, 16, 36.2, 446, 425.1],
    [64, 1, 28.2, 254, 34.4], [64, 2, 29.8, 317, 64.5], [64, 4, 31.0, 467, 122.3], [64, 8, 33.9, 518, 225.5], [64, 16, 40.4, 592, 372.4],
  ].map(([k, c, t, f, s]) => ({ ctxK: k!, c: c!, tbtMs: t, ttftMs: f, totalTokS: s })),
};

function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1]! + s[m]!) / 2;
}

function prefillRow(profile: SimProfile, ctxK: number): { tokS: number; ttftMs: number } {
  const h = new VirtualEngine(profile);
  const tokens = ctxK * 1024;
  let first: number | undefined;
  h.submit(textTokens(tokens, 'p'), 1, (t) => (first ??= t), () => {});
  h.runUntil(1e9, () => first !== undefined);
  return { tokS: tokens / (first! / 1000), ttftMs: first! };
}

const WINDOW_MS = 30_000;
const SETTLE_MS = 1000;

/**
 * One cell in virtual time (test/helpers/virtual-cell.ts), read as the reference pages read it: TBT the
 * median over requests of (last − first token time) / (tokens − 1) inside the window, TTFT the
 * median over every request with a first token, total tok/s the tokens inside the window.
 */
function decodeCell(profile: SimProfile, ctxK: number, c: number, maxOut: number): { tbtMs?: number; ttftMs?: number; totalTokS: number; running: number } {
  const cell = runVirtualCell(profile, { context: ctxK * 1024, concurrency: c, maxOutputTokens: maxOut, windowMs: WINDOW_MS, settleMs: SETTLE_MS });
  const { windowStartMs: start, windowEndMs: end } = cell;
  const gaps: number[] = [];
  let tokens = 0;
  for (const r of cell.requests) {
    const inWin: number[] = [];
    r.chunkMs.forEach((t, i) => {
      if (t >= start && t <= end) for (let k = 0; k < r.chunkTokens[i]!; k++) inWin.push(t);
    });
    tokens += inWin.length;
    if (inWin.length >= 2) gaps.push((inWin[inWin.length - 1]! - inWin[0]!) / (inWin.length - 1));
  }
  const ttfts = cell.requests.filter((r) => r.firstMs !== undefined).map((r) => r.firstMs! - r.sendMs);
  const running = cell.samples.reduce((a, s) => a + s.running!, 0) / cell.samples.length;
  return { tbtMs: median(gaps), ttftMs: median(ttfts), totalTokS: tokens / (WINDOW_MS / 1000), running };
}

function pct(sim: number | undefined, page: number | undefined): string {
  if (sim === undefined || page === undefined) return '—';
  const d = ((sim - page) / page) * 100;
  return `${d >= 0 ? '+' : ''}${d.toFixed(1)} %`;
}

function fit(page: Page): void {
  const profile = getSimProfile(page.profile);
  console.log(`\n## ${page.profile} (max output ${page.maxOut}, KV ${profile.kvCapacityTokens} tokens)\n`);
  console.log('| prefill | page tok/s | sim tok/s | Δ | page TTFT ms | sim TTFT ms |');
  console.log('|---|---|---|---|---|---|');
  for (const [k, tokS, ttft] of page.prefill) {
    const s = prefillRow(profile, k);
    console.log(`| ${k}K | ${tokS} | ${s.tokS.toFixed(0)} | ${pct(s.tokS, tokS)} | ${ttft} | ${s.ttftMs.toFixed(0)} |`);
  }
  console.log('\n| cell | page TBT ms | sim TBT ms | Δ | page total tok/s | sim total tok/s | Δ | page TTFT ms | sim TTFT ms | Δ | capacity |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  const tbtErr: number[] = [];
  for (const cell of page.cells) {
    const over = cell.c * (cell.ctxK * 1024 + page.maxOut) > profile.kvCapacityTokens;
    const pageOver = cell.tbtMs === undefined;
    const capacity = over === pageOver ? (over ? 'Over capacity (both)' : 'runs (both)') : `MISMATCH sim ${over ? 'over' : 'runs'}`;
    if (over || pageOver) {
      console.log(`| ${cell.ctxK}K × ${cell.c} | — | — | | | | | | | | ${capacity} |`);
      continue;
    }
    const s = decodeCell(profile, cell.ctxK, cell.c, page.maxOut);
    if (!cell.artifact && s.tbtMs !== undefined) tbtErr.push(Math.abs((s.tbtMs - cell.tbtMs!) / cell.tbtMs!));
    console.log(
      `| ${cell.ctxK}K × ${cell.c}${cell.artifact ? ' (artifact)' : ''} | ${cell.tbtMs} | ${s.tbtMs?.toFixed(1)} | ${pct(s.tbtMs, cell.tbtMs)} | ${cell.totalTokS} | ${s.totalTokS.toFixed(1)} | ${pct(s.totalTokS, cell.totalTokS)} | ${cell.ttftMs} | ${s.ttftMs?.toFixed(0)} | ${pct(s.ttftMs, cell.ttftMs)} | ${capacity} |`,
    );
  }
  const mean = tbtErr.reduce((a, b) => a + b, 0) / tbtErr.length;
  console.log(`\nTBT on clean cells: mean |Δ| ${(mean * 100).toFixed(1)} %, max |Δ| ${(Math.max(...tbtErr) * 100).toFixed(1)} % over ${tbtErr.length} cells`);
}

const which = process.argv[2] ?? 'all';
if (which === 'all' || which === 'sglang-h200') fit(SGLANG);
if (which === 'all' || which === 'vllm-arc-b65x4') fit(VLLM);
