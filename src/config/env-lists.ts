/** The comma-separated lists of env.ts's variables: token counts (contexts) and whole numbers (concurrency). */
import { parseContext } from '../shapes/labels.js';
import { ConfigError } from '../errors.js';

type Env = Record<string, string | undefined>;

function nonEmpty(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export function tokenList(env: Env, name: string, example: string, allowEmpty: boolean): number[] | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  // empty is unset, as for every variable (a CI input left blank keeps the default), but where an
  // empty list means something: none (LLM_BENCH_PREFILL)
  if (trimmed === '') return allowEmpty ? [] : undefined;
  if (allowEmpty && trimmed.toLowerCase() === 'none') return [];
  const parts = trimmed.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0) throw new ConfigError(`${name} is empty; give a comma-separated list such as ${name}=${example}`);
  return parts.map((p) => {
    try {
      return parseContext(p);
    } catch {
      throw new ConfigError(`${name}: "${p}" is not a token count; use numbers or K-suffixed sizes (K = 1024), e.g. ${name}=${example}`);
    }
  });
}

export function intList(env: Env, name: string, example: string): number[] | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  // a stray comma ("4," or "1,,4") leaves an empty item: skipped, as in a token list
  const parts = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0) throw new ConfigError(`${name} is empty; give a comma-separated list such as ${name}=${example}`);
  return parts.map((s) => {
    const n = Number(s);
    if (!/^\d+$/.test(s) || n < 1) throw new ConfigError(`${name}: "${s}" is not a positive whole number; e.g. ${name}=${example}`);
    return n;
  });
}
