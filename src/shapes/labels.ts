/**
 * Context labels and cell keys. K = 1024 tokens (METHOD.md): 8192 → "8K", 125952 → "123K", 0 → "0";
 * a count that is not a multiple of 1024 is written exactly ("1000").
 * Cell key: `<contextLabel>/<concurrency>` ("8K/16"); prefill key: the context label ("8K");
 * rate cell key: `<contextLabel>@<rate>` ("8K@2", "0@0.5"), the rate in requests/s as given.
 */
import type { SpeedMatrixMeta } from './result.js';

export const TOKENS_PER_K = 1024;

/** Label of a context length in tokens. Throws on a negative or fractional count. */
export function contextLabel(tokens: number): string {
  if (!Number.isSafeInteger(tokens) || tokens < 0) {
    throw new RangeError(`context length must be a whole number of tokens ≥ 0, got ${tokens}`);
  }
  if (tokens > 0 && tokens % TOKENS_PER_K === 0) return `${tokens / TOKENS_PER_K}K`;
  return String(tokens);
}

/**
 * Tokens of a context label: "64K" / "64k" → 65536, "8192" → 8192, "0" → 0, "1.5K" → 1536.
 * Throws a RangeError naming the input when it is not a whole token count.
 */
export function parseContext(label: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kK])?\s*$/.exec(label);
  const tokens = m ? Number(m[1]) * (m[2] ? TOKENS_PER_K : 1) : Number.NaN;
  if (!Number.isSafeInteger(tokens)) {
    throw new RangeError(
      `"${label}" is not a context length: use a whole token count ("8192") or K = 1024 tokens ("8K", "123K")`,
    );
  }
  return tokens;
}

/** Key of a sustained-decode cell: "8K/16". */
export function cellKey(context: number, concurrency: number): string {
  return `${contextLabel(context)}/${concurrency}`;
}

/** Parts of a cell key: "8K/16" → { context: 8192, concurrency: 16 }. Throws on a malformed key. */
export function parseCellKey(key: string): { context: number; concurrency: number } {
  const slash = key.indexOf('/');
  const concurrency = slash < 0 ? Number.NaN : Number(key.slice(slash + 1));
  if (slash < 0 || !Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`"${key}" is not a cell key: use <context>/<concurrency>, e.g. "8K/16" or "0/1"`);
  }
  return { context: parseContext(key.slice(0, slash)), concurrency };
}

/** Sort order of cell keys: by context, then concurrency. */
export function compareCellKeys(a: string, b: string): number {
  const x = parseCellKey(a);
  const y = parseCellKey(b);
  return x.context - y.context || x.concurrency - y.concurrency;
}

/**
 * Key of an open-loop rate cell: "8K@2", "8K@0.5". The rate (requests/s, > 0) is printed as
 * JavaScript prints the number (`String(rate)`), so the key of a configured rate reads as the
 * user wrote it and parses back to the same number.
 */
export function rateCellKey(context: number, rate: number): string {
  if (!Number.isFinite(rate) || rate <= 0) throw new RangeError(`a rate cell's rate must be a number of requests/s above 0, got ${rate}`);
  return `${contextLabel(context)}@${String(rate)}`;
}

/** Parts of a rate cell key: "8K@0.5" → { context: 8192, rate: 0.5 }. Throws on a malformed key. */
export function parseRateCellKey(key: string): { context: number; rate: number } {
  const at = key.indexOf('@');
  const text = at < 0 ? '' : key.slice(at + 1).trim();
  const rate = text === '' ? Number.NaN : Number(text);
  if (at < 0 || !Number.isFinite(rate) || rate <= 0) {
    throw new RangeError(`"${key}" is not a rate cell key: use <context>@<requests per second>, e.g. "8K@2" or "0@0.5"`);
  }
  return { context: parseContext(key.slice(0, at)), rate };
}

/** Sort order of rate cell keys: by context, then rate. */
export function compareRateCellKeys(a: string, b: string): number {
  const x = parseRateCellKey(a);
  const y = parseRateCellKey(b);
  return x.context - y.context || x.rate - y.rate;
}

/**
 * Names of the matrix's Vitest tests, from their keys: `decode 8K/16`, `prefill 8K`, `rate 8K@2`,
 * `capacity 8K`, `rate capacity 8K`. matrix/define.ts names its tests with these and the reporter's
 * progress lines name the same tests with them, so `-t` filters and the lines read alike.
 */
export const testNames = {
  decode: (cellKey: string): string => `decode ${cellKey}`,
  prefill: (prefillKey: string): string => `prefill ${prefillKey}`,
  rate: (rateKey: string): string => `rate ${rateKey}`,
  capacity: (contextLabel: string): string => `capacity ${contextLabel}`,
  rateCapacity: (contextLabel: string): string => `rate capacity ${contextLabel}`,
} as const;

/** The name of the test a meta is the result of (as testNames gives it); undefined for the run meta. */
export function testNameOfMeta(meta: SpeedMatrixMeta): string | undefined {
  switch (meta.kind) {
    case 'cell':
      return testNames.decode(cellKey(meta.cell.context, meta.cell.concurrency));
    case 'prefill':
      return testNames.prefill(meta.row.contextLabel);
    case 'rate':
      return testNames.rate(rateCellKey(meta.cell.context, meta.cell.rate));
    case 'capacity':
      return testNames.capacity(meta.row.contextLabel);
    case 'rate-capacity':
      return testNames.rateCapacity(meta.row.contextLabel);
    default:
      return undefined;
  }
}
