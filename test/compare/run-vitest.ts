/**
 * Test helper: run the project's own Vitest CLI in a child process, as a user or CI job does, with
 * a clean environment (no parent Vitest variables, no LLM_BENCH_* or GITHUB_* leaking in).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const root = join(import.meta.dirname, '..', '..');

/**
 * `vitest <args>` as spawn's command and arguments: this project's Vitest CLI run by this Node,
 * the program `npx vitest` starts, without npm's own start in front of each of the suite's hundred
 * or so children (0.33 s a child on the 2-core VM, idle); a test's `child.kill` then stops Vitest
 * itself, not only npm. The `npx` path a user takes is run by scripts/pack-check, and with signals
 * to its process group by test/faults/matrix-faults.test.ts ("signals").
 */
export function vitestArgv(args: readonly string[]): [string, string[]] {
  return [process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), ...args]];
}

/** the environment without Vitest's own variables and without any LLM_BENCH_* of the caller (but the suite's Client-limited bound) */
export function cleanEnv(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && (!k.startsWith('LLM_BENCH_') || k === 'LLM_BENCH_CLIENT_LIMIT_MS') && k !== 'NODE_ENV'));
}

export function runVitest(args: string[], env: Record<string, string>, timeoutMs = 120_000): { code: number | null; out: string } {
  // no GITHUB_* either: these runs must not write a job summary
  const clean = Object.fromEntries(Object.entries(cleanEnv()).filter(([k]) => !k.startsWith('GITHUB_')));
  const r = spawnSync(...vitestArgv(args), {
    cwd: root,
    env: { ...clean, LLM_BENCH_QUIET: '1', NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}
