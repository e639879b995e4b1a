/**
 * Prometheus text exposition (0.0.4, and the OpenMetrics subset engines emit) → samples, plus the
 * few reductions adapters need. Lines that do not parse are counted and skipped; never throws.
 *
 * Hand-written, measured against the npm libraries (docs/libraries.md, perf/libraries.ts):
 * parse-prometheus-text-format 1.1.1 merges every labelled histogram into one series without
 * labels and drops its _count/_sum (wrong on the vLLM, SGLang and TRT-LLM TTFT histograms that
 * readHistogram sums), and throws away the whole scrape for one line it cannot read;
 * prom2javascript 0.2.0 throws on metric names with a colon (vllm:, sglang:, llamacpp:), on NaN,
 * -Inf and timestamps. CPU decides nothing here (about 70–90 µs per scrape either way, once a second).
 */

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  /** may be Infinity, -Infinity or NaN */
  value: number;
  /** the optional timestamp as written (Prometheus text: ms; OpenMetrics: s) */
  timestamp?: number;
}

export interface PromParseResult {
  samples: PromSample[];
  /** `# TYPE` per metric family name */
  types: Record<string, string>;
  /** lines that were neither comments nor samples */
  skippedLines: number;
}

const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;
const LABEL_START = /[a-zA-Z_]/;
const LABEL_CHAR = /[a-zA-Z0-9_]/;

function parseFloatToken(token: string): number | undefined {
  switch (token) {
    case '+Inf':
    case 'Inf':
    case '+inf':
    case 'inf':
      return Infinity;
    case '-Inf':
    case '-inf':
      return -Infinity;
    case 'NaN':
    case 'nan':
      return NaN;
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(token) && !/^[+-]?0[xX][0-9a-fA-F]+$/.test(token)) return undefined;
  const n = Number(token);
  return Number.isNaN(n) ? undefined : n;
}

/** Parse one sample line; undefined when malformed. */
export function parseSampleLine(line: string): PromSample | undefined {
  let i = 0;
  const n = line.length;
  const skipSpace = (): void => {
    while (i < n && (line[i] === ' ' || line[i] === '\t')) i++;
  };
  skipSpace();
  if (i >= n || !NAME_START.test(line[i]!)) return undefined;
  const nameStart = i;
  while (i < n && NAME_CHAR.test(line[i]!)) i++;
  const name = line.slice(nameStart, i);
  const labels: Record<string, string> = {};
  skipSpace();
  if (line[i] === '{') {
    i++;
    for (;;) {
      skipSpace();
      if (line[i] === '}') {
        i++;
        break;
      }
      if (i >= n || !LABEL_START.test(line[i]!)) return undefined;
      const ls = i;
      while (i < n && LABEL_CHAR.test(line[i]!)) i++;
      const label = line.slice(ls, i);
      skipSpace();
      if (line[i] !== '=') return undefined;
      i++;
      skipSpace();
      if (line[i] !== '"') return undefined;
      i++;
      let value = '';
      let closed = false;
      while (i < n) {
        const c = line[i]!;
        if (c === '\\') {
          const next = line[i + 1];
          if (next === undefined) return undefined;
          value += next === 'n' ? '\n' : next; // \\ → \, \" → ", \n → newline, other → itself
          i += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        value += c;
        i++;
      }
      if (!closed) return undefined;
      labels[label] = value;
      skipSpace();
      if (line[i] === ',') {
        i++;
        continue;
      }
      if (line[i] === '}') {
        i++;
        break;
      }
      return undefined;
    }
  }
  const rest = line.slice(i).trim().split(/[ \t]+/);
  if (rest.length < 1 || rest.length > 2 || rest[0] === '') return undefined;
  const value = parseFloatToken(rest[0]!);
  if (value === undefined) return undefined;
  const sample: PromSample = { name, labels, value };
  if (rest.length === 2) {
    const ts = parseFloatToken(rest[1]!);
    if (ts === undefined || !Number.isFinite(ts)) return undefined;
    sample.timestamp = ts;
  }
  return sample;
}

/** Parse a whole exposition body. */
export function parsePrometheus(text: string): PromParseResult {
  const samples: PromSample[] = [];
  const types: Record<string, string> = {};
  let skippedLines = 0;
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (trimmed.startsWith('#')) {
      const m = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(trimmed);
      if (m) types[m[1]!] = m[2]!;
      continue;
    }
    const sample = parseSampleLine(line);
    if (sample) samples.push(sample);
    else skippedLines++;
  }
  return { samples, types, skippedLines };
}

function nameVariants(name: string): string[] {
  return name.endsWith('_total') ? [name, name.slice(0, -'_total'.length)] : [name, `${name}_total`];
}

function matchesFilter(sample: PromSample, filter: Record<string, string> | undefined): boolean {
  if (!filter) return true;
  for (const [k, v] of Object.entries(filter)) if (sample.labels[k] !== v) return false;
  return true;
}

/**
 * The samples of the first name in `names` that has any (each name matched with and without
 * `_total`), filtered by exact label values.
 */
export function selectMetric(samples: readonly PromSample[], names: readonly string[], filter?: Record<string, string>): PromSample[] {
  for (const name of names) {
    const variants = nameVariants(name);
    const found = samples.filter((s) => variants.includes(s.name) && matchesFilter(s, filter));
    if (found.length > 0) return found;
  }
  return [];
}

/** Sum over all label sets (ranks, engines) of the first matching name; undefined when none. */
export function sumMetric(samples: readonly PromSample[], names: readonly string[], filter?: Record<string, string>): number | undefined {
  const found = selectMetric(samples, names, filter).filter((s) => !Number.isNaN(s.value));
  if (found.length === 0) return undefined;
  return found.reduce((acc, s) => acc + s.value, 0);
}

/** Mean over label sets (for ratios such as KV usage across data-parallel ranks); undefined when none. */
export function meanMetric(samples: readonly PromSample[], names: readonly string[], filter?: Record<string, string>): number | undefined {
  const found = selectMetric(samples, names, filter).filter((s) => !Number.isNaN(s.value));
  if (found.length === 0) return undefined;
  return found.reduce((acc, s) => acc + s.value, 0) / found.length;
}

/** Labels of an info gauge (e.g. `vllm:cache_config_info`): the first sample's labels, or undefined. */
export function readLabels(samples: readonly PromSample[], name: string): Record<string, string> | undefined {
  return samples.find((s) => s.name === name)?.labels;
}

/**
 * A filter on `label` = `value` when some sample of `names` carries that value; otherwise undefined
 * (so a server whose label differs from the model id is still read).
 */
export function filterIfPresent(
  samples: readonly PromSample[],
  names: readonly string[],
  label: string,
  value: string | undefined,
): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  return selectMetric(samples, names, { [label]: value }).length > 0 ? { [label]: value } : undefined;
}

/**
 * Sum over label sets, except that samples differing only in `replicaLabels` are replicas of one
 * value (e.g. SGLang's tp_rank/pp_rank when every rank reports the same scheduler) and count once
 * (their maximum). With a single replica per group this equals sumMetric.
 */
export function sumMetricOverReplicas(
  samples: readonly PromSample[],
  names: readonly string[],
  replicaLabels: readonly string[],
  filter?: Record<string, string>,
): number | undefined {
  const found = selectMetric(samples, names, filter).filter((s) => !Number.isNaN(s.value));
  if (found.length === 0) return undefined;
  const groups = new Map<string, number>();
  for (const s of found) {
    const key = JSON.stringify(
      Object.keys(s.labels)
        .filter((k) => !replicaLabels.includes(k))
        .sort()
        .map((k) => [k, s.labels[k]]),
    );
    const prev = groups.get(key);
    groups.set(key, prev === undefined ? s.value : Math.max(prev, s.value));
  }
  let total = 0;
  for (const v of groups.values()) total += v;
  return total;
}

/**
 * A histogram family (`<name>_bucket{le}`, `_sum`, `_count`) summed over label sets, or undefined
 * when it has no buckets. Bounds are in the metric's unit (seconds for *_seconds).
 */
export function readHistogram(
  samples: readonly PromSample[],
  name: string,
  filter?: Record<string, string>,
): import('../shapes/engine.js').HistogramSnapshot | undefined {
  const byBound = new Map<number, number>();
  let count = 0;
  let sumS = 0;
  for (const s of samples) {
    if (!matchesFilter(s, filter) || Number.isNaN(s.value)) continue;
    if (s.name === `${name}_bucket`) {
      const le = s.labels.le === undefined ? undefined : s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      if (le === undefined || Number.isNaN(le)) continue;
      byBound.set(le, (byBound.get(le) ?? 0) + s.value);
    } else if (s.name === `${name}_count`) count += s.value;
    else if (s.name === `${name}_sum`) sumS += s.value;
  }
  if (byBound.size === 0) return undefined;
  const upperBoundsS = [...byBound.keys()].sort((a, b) => a - b);
  return { upperBoundsS, cumulativeCounts: upperBoundsS.map((b) => byBound.get(b)!), count, sumS };
}
