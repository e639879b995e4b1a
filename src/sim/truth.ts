/**
 * Ground truth: per request, when the sim wrote each chunk and how many tokens it carried.
 * Bounded: at most `maxRecords` records, and at most MAX_TOKEN_ENTRIES chunk entries over all of
 * them; the oldest records are dropped first.
 */

export type TruthEnd = 'done' | 'aborted' | 'error' | 'running';

const MAX_TOKEN_ENTRIES = 4_000_000;

export class TruthRecord {
  admittedMs: number | undefined;
  firstTokenMs: number | undefined;
  /** flat pairs tMs, n, tMs, n, … in a typed array (off the GC'd heap once large; grows ×2) */
  private buf = new Float64Array(32);
  /** number of chunk entries */
  chunkCount = 0;
  promptTokens = 0;
  /** FNV-1a of the prompt text as the server rendered it (chat template included), 8 hex digits */
  promptHash: string | undefined;
  cachedTokens = 0;
  completionTokens = 0;
  end: TruthEnd = 'running';
  endMs: number | undefined;
  /**
   * the engine's own generation (before any poll or chunking holds tokens back): when its first and
   * last emission came, the tokens of the first, and all of them; the server's own decode rate is
   * (genTokens − genFirstTokens) / (genLastMs − genFirstMs), as llama.cpp's timings give it
   */
  genFirstMs: number | undefined;
  genLastMs: number | undefined;
  genFirstTokens = 0;
  genTokens = 0;

  constructor(
    readonly id: string,
    readonly receivedMs: number,
  ) {}

  /** prompt tokens computed, the cached ones left out (llama.cpp's prompt_n) */
  get promptComputedTokens(): number {
    return Math.max(0, this.promptTokens - this.cachedTokens);
  }

  /** ms of prompt processing up to `doneMs`: from admission (or arrival) on */
  promptMsUntil(doneMs: number): number {
    return Math.max(0, doneMs - (this.admittedMs ?? this.receivedMs));
  }

  /** Records one engine emission of `n` tokens at `tMs` (monoMs), whenever it is written. */
  noteGenerated(tMs: number, n: number): void {
    if (this.genFirstMs === undefined) {
      this.genFirstMs = tMs;
      this.genFirstTokens = n;
    }
    this.genLastMs = tMs;
    this.genTokens += n;
  }

  /** Records one chunk write: when (monoMs) and how many tokens it carried. */
  addChunk(tMs: number, n: number): void {
    const at = this.chunkCount * 2;
    if (at + 2 > this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[at] = tMs;
    this.buf[at + 1] = n;
    this.chunkCount++;
  }

  toJSON(): Record<string, unknown> {
    const tokens: [number, number][] = [];
    for (let i = 0; i < this.chunkCount * 2; i += 2) tokens.push([this.buf[i] as number, this.buf[i + 1] as number]);
    return {
      id: this.id,
      receivedMs: this.receivedMs,
      admittedMs: this.admittedMs,
      firstTokenMs: this.firstTokenMs,
      endMs: this.endMs,
      genFirstMs: this.genFirstMs,
      genLastMs: this.genLastMs,
      genFirstTokens: this.genFirstTokens,
      genTokens: this.genTokens,
      tokens,
      promptTokens: this.promptTokens,
      promptHash: this.promptHash,
      cachedTokens: this.cachedTokens,
      completionTokens: this.completionTokens,
      end: this.end,
    };
  }
}

export class TruthStore {
  private readonly records = new Map<string, TruthRecord>();
  private entries = 0;

  constructor(private readonly maxRecords: number) {}

  add(rec: TruthRecord): void {
    const old = this.records.get(rec.id);
    if (old) {
      this.entries -= old.chunkCount;
      this.records.delete(rec.id);
    }
    this.records.set(rec.id, rec);
    this.trim();
  }

  /** Call after appending chunk entries (cheap; trims rarely). */
  noteChunk(): void {
    this.entries++;
    if (this.entries > MAX_TOKEN_ENTRIES) this.trim();
  }

  get(id: string): TruthRecord | undefined {
    return this.records.get(id);
  }

  list(sinceMs = -Infinity): TruthRecord[] {
    const out: TruthRecord[] = [];
    for (const r of this.records.values()) if (r.receivedMs >= sinceMs) out.push(r);
    return out;
  }

  clear(): void {
    this.records.clear();
    this.entries = 0;
  }

  get size(): number {
    return this.records.size;
  }

  private trim(): void {
    while (this.records.size > this.maxRecords || (this.entries > MAX_TOKEN_ENTRIES && this.records.size > 1)) {
      const first = this.records.values().next().value as TruthRecord;
      this.records.delete(first.id);
      this.entries -= first.chunkCount;
    }
  }
}
