/**
 * Running `vitest bench --run` as a user does (`npx vitest bench --run`), for the fault tests; and
 * the simulator in a process of its own (`llm-speed-matrix sim`), as a real server is.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, root, vitestArgv } from '../compare/run-vitest.js';

export { cleanEnv, root, vitestArgv };

export interface BenchRun {
  code: number | null;
  out: string;
  seconds: number;
  timedOut: boolean;
}

/** `vitest bench --run` with `env`, killed after `limitS` (a hang is then a failure, not a stuck CI). */
export function runBench(env: Record<string, string>, limitS = 90): BenchRun {
  const started = Date.now();
  const r = spawnSync(...vitestArgv(['bench', '--run']), {
    cwd: root,
    env: { ...cleanEnv(), NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: limitS * 1000,
    killSignal: 'SIGKILL',
  });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}`, seconds: (Date.now() - started) / 1000, timedOut: r.error !== undefined && /ETIMEDOUT/.test(String(r.error)) };
}

/**
 * A threshold file of `file` in a fresh temporary folder, and the variables that point a run at
 * it and at a results folder beside it (`reports/`).
 */
export function withThresholds(file: object): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-gate-'));
  const path = join(dir, 'thresholds.json');
  writeFileSync(path, JSON.stringify(file));
  return { dir, env: { LLM_BENCH_THRESHOLDS: path, LLM_BENCH_OUT: join(dir, 'reports') } };
}

/** a small matrix on the tiny simulator */
export const TINY: Record<string, string> = {
  LLM_BENCH_SIM_PROFILE: 'tiny',
  LLM_BENCH_CONTEXTS: '0',
  LLM_BENCH_CONCURRENCY: '2',
  LLM_BENCH_PREFILL: 'none',
  LLM_BENCH_DURATION_S: '1',
  LLM_BENCH_MAX_TOKENS: '32',
};

/**
 * `llm-speed-matrix sim --profile <profile> --port <port>` in a process of its own, once it says it
 * is listening (killed, and an error, when it has not within `limitMs`). The caller kills it.
 */
export async function startSimProcess(port: number, profile = 'tiny', limitMs = 20_000, extraArgs: readonly string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(root, 'bin', 'llm-speed-matrix.mjs'), 'sim', '--profile', profile, '--port', String(port), ...extraArgs], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the sim did not start in ${limitMs / 1000} s`));
    }, limitMs);
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}
