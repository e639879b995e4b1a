/**
 * Progress lines from inside a running cell (scout, gate, window), so a long run is never silent.
 * Written straight to stderr: Vitest would otherwise hold console output until the test ends.
 * Set LLM_BENCH_QUIET=1 to silence them.
 */
export function progress(message: string): void {
  if (process.env.LLM_BENCH_QUIET === '1') return;
  const t = new Date().toISOString().slice(11, 19);
  process.stderr.write(`[speed-matrix ${t}] ${message}\n`);
}
