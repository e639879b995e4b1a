/**
 * KV-cache accounting at block granularity, with a prefix cache of full prompt blocks.
 *
 * A running request holds (a) the full blocks of its prompt, shared and reference-counted through
 * the prefix cache when caching is on, and (b) private blocks for the rest of its prompt and its
 * whole output budget (prompt + max_tokens is reserved at admission, so a running request never
 * needs preemption). Cached blocks no request uses stay resident, in LRU order, until a new
 * admission needs their space.
 */

import { fnv1a } from '../random.js';
import { scanTokens } from './tokenizer.js';

export interface PromptBlocks {
  /** prompt tokens */
  tokens: number;
  /** chained hash key of every full block of the prompt, in order */
  hashes: string[];
  /**
   * FNV-1a (32-bit) of the whole prompt text: the request's identity in the ground truth
   * (`promptHash`), so a test can tell which prompt a request carried without the text. With
   * caching it continues the blocks' first chain over the tail, which is the one-pass hash of the
   * text (FNV-1a's state is its output), so it costs no second pass.
   */
  textHash: number;
}

/** Counts the prompt's tokens and hashes each full block, chained (a block's key covers its whole prefix). */
export function hashPromptBlocks(text: string, blockSize: number, withHashes: boolean): PromptBlocks {
  if (!withHashes) return { tokens: scanTokens(text), hashes: [], textHash: fnv1a(text) };
  const hashes: string[] = [];
  let inBlock = 0;
  let blockStart = 0;
  let h1 = 0x811c9dc5;
  let h2 = 0x1b873593;
  const tokens = scanTokens(text, (_start, end) => {
    inBlock++;
    if (inBlock === blockSize) {
      h1 = fnv1a(text, blockStart, end, h1);
      h2 = fnv1a(text, blockStart, end, h2 ^ 0x5bd1e995);
      hashes.push(`${h1.toString(36)}.${h2.toString(36)}`);
      inBlock = 0;
      blockStart = end;
    }
  });
  return { tokens, hashes, textHash: fnv1a(text, blockStart, text.length, h1) };
}

interface CacheEntry {
  refs: number;
}

/** What an admitted request holds; give it back with `release`. */
export interface KvLease {
  shared: string[];
  privateBlocks: number;
  cachedTokens: number;
}

export class KvCache {
  readonly totalBlocks: number;
  private privateBlocks = 0;
  private sharedInUse = 0;
  private readonly entries = new Map<string, CacheEntry>();
  /** entries with refs === 0, least recently used first */
  private readonly lru = new Map<string, CacheEntry>();

  constructor(
    capacityTokens: number,
    readonly blockSize: number,
  ) {
    this.totalBlocks = Math.floor(capacityTokens / blockSize);
  }

  get usedBlocks(): number {
    return this.privateBlocks + this.sharedInUse;
  }
  get cachedFreeBlocks(): number {
    return this.lru.size;
  }

  /** Cached tokens a prompt would reuse now (vLLM rule: at most ⌊(n−1)/bs⌋ blocks). */
  private hitBlocks(p: PromptBlocks): number {
    const maxHit = Math.min(p.hashes.length, Math.floor(Math.max(0, p.tokens - 1) / this.blockSize));
    let i = 0;
    while (i < maxHit && this.entries.has(p.hashes[i] as string)) i++;
    return i;
  }

  /**
   * Reserves blocks for a prompt plus `outputTokens`; returns undefined when they do not fit even
   * after evicting every unused cached block (the request must wait).
   */
  tryAdmit(p: PromptBlocks, outputTokens: number): KvLease | undefined {
    const hit = this.hitBlocks(p);
    let hitFromLru = 0;
    for (let i = 0; i < hit; i++) if (this.lru.has(p.hashes[i] as string)) hitFromLru++;
    const newShared = p.hashes.length - hit;
    const totalNeeded = Math.ceil((p.tokens + outputTokens) / this.blockSize);
    const privateBlocks = Math.max(0, totalNeeded - p.hashes.length);
    const needNew = newShared + privateBlocks;
    if (needNew + hitFromLru > this.totalBlocks - this.usedBlocks) return undefined;
    // take the hits
    for (let i = 0; i < hit; i++) {
      const key = p.hashes[i] as string;
      const e = this.entries.get(key) as CacheEntry;
      if (e.refs === 0) {
        this.lru.delete(key);
        this.sharedInUse++;
      }
      e.refs++;
    }
    // make room
    let free = this.totalBlocks - this.usedBlocks - this.lru.size;
    while (free < needNew) {
      const oldest = this.lru.keys().next().value as string;
      this.lru.delete(oldest);
      this.entries.delete(oldest);
      free++;
    }
    for (let i = hit; i < p.hashes.length; i++) {
      const key = p.hashes[i] as string;
      const existing = this.entries.get(key);
      if (existing) {
        // a later block of the chain was cached while an earlier one was evicted: reuse it
        if (existing.refs === 0) {
          this.lru.delete(key);
          this.sharedInUse++;
          free++; // it was counted in lru; we reserved one block too many
        }
        existing.refs++;
      } else {
        this.entries.set(key, { refs: 1 });
        this.sharedInUse++;
      }
    }
    this.privateBlocks += privateBlocks;
    return { shared: p.hashes, privateBlocks, cachedTokens: hit * this.blockSize };
  }

  release(lease: KvLease): void {
    this.privateBlocks -= lease.privateBlocks;
    for (const key of lease.shared) {
      const e = this.entries.get(key);
      if (!e) continue;
      e.refs--;
      if (e.refs === 0) {
        this.sharedInUse--;
        this.lru.set(key, e);
      }
    }
    lease.shared = [];
    lease.privateBlocks = 0;
  }

  /** Drops every unused cached block (POST /_sim/reset). */
  clearUnused(): void {
    for (const key of this.lru.keys()) this.entries.delete(key);
    this.lru.clear();
  }
}
