/**
 * The workload a user writes (issue 23), as text — LLM_BENCH_WORKLOAD, or the suite's `workload`
 * as a string: `kind:key=value,…` — or as the suite's object (`{ kind: 'sharedPrefix', groups: 4 }`,
 * the same keys), parsed into a `Workload` (src/shapes/workload.ts). `workloadText` writes the
 * canonical text back, and parsing it gives the same workload.
 *
 * | kind           | keys (default)                                                                    |
 * |----------------|-----------------------------------------------------------------------------------|
 * | `synthetic`    | none: the method's own prompts (the default workload)                             |
 * | `file:<path>`  | the path right after the colon (resolved to absolute, must be a readable file), `seed` (1) |
 * | `lengths`      | `in` (normal(1024,256)), `out` (the run's maxOutputTokens, fixed), `seed` (1)    |
 * | `sharedPrefix` | `groups` (4), `prefix` (3072 tokens), `suffix` (1024 tokens), `seed` (1)          |
 * | `multiTurn`    | `turns` (5, at most 100), `user` (256 tokens), `system` (256 tokens), `think` (1s), `seed` (1) |
 *
 * Distributions are written as config/distribution-input.ts says. Every mistake is a ConfigError
 * naming the field (LLM_BENCH_WORKLOAD or workload), the key, what was given and a right value.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { ConfigError } from '../errors.js';
import { WORKLOAD_KINDS, type LengthDistribution, type Workload, type WorkloadKind } from '../shapes/workload.js';
import { DEFAULTS } from './defaults.js';
import { parseDistribution, type DistributionRules } from './distribution-input.js';
import { nearestName } from '../spelling.js';
import type { WorkloadObject } from './workload-object.js';

export type { FileWorkloadInput, LengthsWorkloadInput, MultiTurnWorkloadInput, SharedPrefixWorkloadInput, SyntheticWorkloadInput, WorkloadObject } from './workload-object.js';

/**
 * A workload as parsed, before the run's maxOutputTokens is known: `lengths` may lack its output
 * distribution (`completeWorkload` fills it in).
 */
export type WorkloadSpec =
  | Exclude<Workload, { kind: 'lengths' }>
  | (Omit<Extract<Workload, { kind: 'lengths' }>, 'output'> & { output?: LengthDistribution });

/** Each kind's keys, in canonical order (file's path is written after the colon, not as a key). */
export const WORKLOAD_KEYS: Readonly<Record<WorkloadKind, readonly string[]>> = {
  synthetic: [],
  file: ['seed'],
  lengths: ['in', 'out', 'seed'],
  sharedPrefix: ['groups', 'prefix', 'suffix', 'seed'],
  multiTurn: ['turns', 'user', 'system', 'think', 'seed'],
};

/** An example of each key's value, for the messages. */
const EXAMPLES: Record<string, string> = {
  seed: '1', in: 'normal(1024,256)', out: '256', groups: '4', prefix: '3072', suffix: '1024',
  turns: '5', user: '256', system: '256', think: '2s',
};
const KIND_EXAMPLES: Record<WorkloadKind, string> = {
  synthetic: 'synthetic',
  file: 'file:prompts.jsonl,seed=1',
  lengths: 'lengths:in=normal(1024,256),out=256',
  sharedPrefix: 'sharedPrefix:groups=4,prefix=3072,suffix=1024',
  multiTurn: 'multiTurn:turns=5,think=2s',
};

/** Where the workload came from, for the messages: the field, and whether it was text or an object. */
interface Source {
  field: string;
  object: boolean;
}

function fail(src: Source, message: string): never {
  throw new ConfigError(`${src.field}: ${message}`);
}

function example(src: Source, key: string, value = EXAMPLES[key] ?? ''): string {
  return src.object ? `${key}: ${/^\d+$/.test(value) ? value : `'${value}'`}` : `${key}=${value}`;
}


function kindOf(given: string, src: Source): WorkloadKind {
  const kind = WORKLOAD_KINDS.find((k) => k.toLowerCase() === given.trim().toLowerCase());
  if (kind) return kind;
  const near = nearestName(given.trim(), WORKLOAD_KINDS);
  const eg = src.object ? `{ kind: 'sharedPrefix', groups: 4 }` : `${src.field === 'LLM_BENCH_WORKLOAD' ? 'LLM_BENCH_WORKLOAD=' : ''}${KIND_EXAMPLES.sharedPrefix}`;
  fail(src, `"${given}" is not a workload kind${near ? ` (did you mean ${near}?)` : ''}; the kinds are ${WORKLOAD_KINDS.join(', ')}, e.g. ${eg}`);
}

/** Splits `a=1,b=normal(1,2),c=3` at the commas outside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** The key=value pairs of the text, each once. */
function pairs(text: string, src: Source, kind: WorkloadKind): Map<string, string> {
  const out = new Map<string, string>();
  if (text.trim() === '') return out;
  for (const part of splitTopLevel(text)) {
    const eq = part.indexOf('=');
    if (eq < 0) fail(src, `"${part.trim()}" in ${kind} is not key=value; e.g. ${KIND_EXAMPLES[kind]}`);
    const key = part.slice(0, eq).trim();
    if (out.has(key)) fail(src, `${kind}: the key ${key} is given twice; give it once`);
    out.set(key, part.slice(eq + 1).trim());
  }
  return out;
}

function checkKeys(values: Map<string, string>, kind: WorkloadKind, src: Source): void {
  const keys = WORKLOAD_KEYS[kind];
  for (const key of values.keys()) {
    if (keys.includes(key)) continue;
    if (keys.length === 0) fail(src, `${kind} takes no keys ("${key}" given); write just ${src.object ? `{ kind: '${kind}' }` : kind}`);
    const near = nearestName(key, keys);
    fail(src, `"${key}" is not a key of ${kind}${near ? ` (did you mean ${near}?)` : ''}; its keys are ${keys.join(', ')}, e.g. ${KIND_EXAMPLES[kind]}`);
  }
}

/** A whole number `least … most` (K sizes allowed for token counts), or the default. */
function count(values: Map<string, string>, key: string, src: Source, kind: WorkloadKind, fallback: number, least: number, most = Number.MAX_SAFE_INTEGER, tokens = false): number {
  const raw = values.get(key);
  if (raw === undefined) return fallback;
  const m = tokens ? /^(\d+(?:\.\d+)?)\s*([kK])?$/.exec(raw) : /^(\d+)$/.exec(raw);
  const n = m ? Number(m[1]) * (m[2] ? 1024 : 1) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < least || n > most) {
    const range = most === Number.MAX_SAFE_INTEGER ? `≥ ${least}` : `${least} … ${most}`;
    fail(src, `${kind} ${key}="${raw}" must be a whole number ${range}${tokens ? ' of tokens' : ''}; e.g. ${example(src, key)}`);
  }
  return n;
}

function distribution(values: Map<string, string>, key: string, src: Source, kind: WorkloadKind, rules: DistributionRules, fallback?: string): LengthDistribution | undefined {
  const raw = values.get(key) ?? fallback;
  if (raw === undefined) return undefined;
  const d = parseDistribution(raw, rules);
  if ('error' in d) fail(src, `${kind} ${key}="${raw}": ${d.error}; e.g. ${example(src, key)}`);
  return d;
}

/** The file kind's path, checked to be a readable file, resolved against `cwd`. */
function promptFilePath(given: string, src: Source, cwd: string): string {
  const eg = src.object ? `{ kind: 'file', path: 'bench/workloads/sample.jsonl' }` : 'file:bench/workloads/sample.jsonl';
  if (given.trim() === '') fail(src, `the file workload needs the path of a JSONL prompt file right after "file:"; e.g. ${eg}`);
  const path = resolvePath(cwd, given.trim());
  let problem: string | undefined;
  try {
    if (!statSync(path).isFile()) problem = 'is not a file';
    else accessSync(path, constants.R_OK);
  } catch (error) {
    problem ??= (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (problem) fail(src, `the prompt file ${path} ${problem}; give the path of a JSONL file of prompts (relative to ${cwd}), e.g. ${eg}`);
  return path;
}

function build(kind: WorkloadKind, values: Map<string, string>, src: Source, path: string | undefined, cwd: string): WorkloadSpec {
  checkKeys(values, kind, src);
  const D = DEFAULTS.workload;
  const seed = count(values, 'seed', src, kind, D.seed, 0);
  const tokens = (least: number): DistributionRules => ({ unit: 'tokens', least });
  switch (kind) {
    case 'synthetic':
      return { kind };
    case 'file':
      return { kind, path: promptFilePath(path ?? '', src, cwd), seed };
    case 'lengths': {
      const output = distribution(values, 'out', src, kind, tokens(1));
      return { kind, input: distribution(values, 'in', src, kind, tokens(1), D.lengthsIn)!, ...(output ? { output } : {}), seed };
    }
    case 'sharedPrefix':
      return {
        kind,
        groups: count(values, 'groups', src, kind, D.groups, 1),
        prefixTokens: count(values, 'prefix', src, kind, D.prefixTokens, 1, undefined, true),
        suffixTokens: count(values, 'suffix', src, kind, D.suffixTokens, 1, undefined, true),
        seed,
      };
    case 'multiTurn':
      return {
        kind,
        turns: count(values, 'turns', src, kind, D.turns, 1, D.maxTurns),
        userTokens: count(values, 'user', src, kind, D.userTokens, 1, undefined, true),
        systemTokens: count(values, 'system', src, kind, D.systemTokens, 0, undefined, true),
        thinkMs: distribution(values, 'think', src, kind, { unit: 'time', least: 0 }, D.think)!,
        seed,
      };
  }
}

/** Text: `kind` or `kind:key=value,…`; `file:<path>[,seed=N]` (a comma followed by `key=` ends the path). */
function fromText(text: string, src: Source, cwd: string): WorkloadSpec {
  const t = text.trim();
  if (t === '') fail(src, `is empty; give a workload such as ${KIND_EXAMPLES.sharedPrefix} (or synthetic, the default)`);
  const colon = t.indexOf(':');
  const kind = kindOf(colon < 0 ? t : t.slice(0, colon), src);
  const rest = colon < 0 ? '' : t.slice(colon + 1);
  if (kind !== 'file') return build(kind, pairs(rest, src, kind), src, undefined, cwd);
  const keys = /,\s*[A-Za-z]\w*\s*=/.exec(rest);
  const path = keys ? rest.slice(0, keys.index) : rest;
  return build(kind, pairs(keys ? rest.slice(keys.index + 1) : '', src, kind), src, path, cwd);
}

/** The suite's object form: the same keys as the text, numbers or distribution strings as values. */
function fromObject(input: Record<string, unknown>, src: Source, cwd: string): WorkloadSpec {
  if (typeof input.kind !== 'string') fail(src, `an object workload needs its kind, one of ${WORKLOAD_KINDS.join(', ')}; e.g. { kind: 'sharedPrefix', groups: 4 }`);
  const kind = kindOf(input.kind, src);
  const values = new Map<string, string>();
  let path: string | undefined;
  for (const [key, v] of Object.entries(input)) {
    if (key === 'kind' || v === undefined) continue;
    if (kind === 'file' && key === 'path') {
      if (typeof v !== 'string') fail(src, `file's path must be a string, e.g. { kind: 'file', path: 'bench/workloads/sample.jsonl' }`);
      path = v;
      continue;
    }
    if (typeof v === 'number' && key === 'think') fail(src, `multiTurn think=${v} has no unit; write a time string, e.g. think: '2s' or think: '500ms'`);
    if (typeof v !== 'number' && typeof v !== 'string') fail(src, `${kind} ${key} must be a number or a distribution string; e.g. ${example(src, key)}`);
    values.set(key, String(v).trim());
  }
  if (kind === 'file' && path === undefined) fail(src, `the file workload needs its path; e.g. { kind: 'file', path: 'bench/workloads/sample.jsonl' }`);
  return build(kind, values, src, path, cwd);
}

/**
 * Parses a workload (text or the suite's object). `field` names it in every message
 * (`LLM_BENCH_WORKLOAD` or `workload`); a file path is resolved against `cwd`. Throws ConfigError.
 */
export function parseWorkloadInput(input: string | WorkloadObject, field: string, cwd: string = process.cwd()): WorkloadSpec {
  if (typeof input === 'string') return fromText(input, { field, object: false }, cwd);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConfigError(`${field}: a workload is text such as '${KIND_EXAMPLES.sharedPrefix}' or an object such as { kind: 'sharedPrefix', groups: 4 }`);
  }
  return fromObject(input as unknown as Record<string, unknown>, { field, object: true }, cwd);
}

/** The workload of the run: `lengths` without `out` gets the run's maxOutputTokens, fixed. */
export function completeWorkload(spec: WorkloadSpec, maxOutputTokens: number): Workload {
  if (spec.kind !== 'lengths' || spec.output !== undefined) return spec as Workload;
  return { ...spec, output: { kind: 'fixed', value: maxOutputTokens } };
}
