/**
 * llama.cpp's prompt cache, one prompt a slot (the sim's llama.cpp personality; b4748's
 * examples/server/server.cpp, checked against a real b4748 on 2026-12-01):
 *
 * - A server with N slots keeps, per slot, the tokens of the last prompt it ran. A request re-uses
 *   only the slot it is given, and from it only the longest common prefix with that slot's prompt
 *   (at least one prompt token is always computed, to sample the first token).
 * - The slot: among the IDLE slots that hold a prompt, the one with the longest common part whose
 *   share of that slot's prompt is above the similarity threshold (`--slot-prompt-similarity`,
 *   0.5 by default); else the idle slot least recently released. A busy slot is never chosen, so
 *   with every slot busy but one the request takes that one, whatever it holds.
 * - The slot then holds the new prompt.
 *
 * So, unlike vLLM's shared block cache, G groups on N < G slots thrash even at one stream, and N
 * streams on N slots miss whenever a request's group sits in a slot that is still busy. Measured on
 * the real server (sharedPrefix, P/S 1024/256, 4 slots): 4 groups 79.8 % at 1 stream and 43.4 % at
 * 4; 16 groups 5.4 % at 1 stream.
 *
 * Approximations: the common part is counted in whole prompt blocks (PromptBlocks.hashes, the
 * sim's prefix-cache granularity) and the similarity uses that common prefix where llama.cpp uses
 * the longest common subsequence; a reply's tokens are not kept (the sim does not hash output),
 * so a multi-turn history re-uses its previous prompt, not the reply. Pure state, no I/O.
 */
import type { PromptBlocks } from './kv-cache.js';

/** llama.cpp's default `--slot-prompt-similarity` */
export const SLOT_PROMPT_SIMILARITY = 0.5;

interface Slot {
  /** block hashes of the prompt it last ran (empty: never used) */
  hashes: readonly string[];
  busy: boolean;
  /** release order; −1 never released (chosen first, lowest id first, as t_last_used = −1) */
  lastUsed: number;
}

/** What acquire gives a request: its slot and the prompt tokens it re-uses from it. */
export interface SlotLease {
  slot: number;
  cachedTokens: number;
}

function commonBlocks(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

export class SlotCache {
  private readonly slots: Slot[];
  private releases = 0;

  constructor(
    slotCount: number,
    readonly blockSize: number,
    readonly similarity = SLOT_PROMPT_SIMILARITY,
  ) {
    this.slots = Array.from({ length: slotCount }, () => ({ hashes: [], busy: false, lastUsed: -1 }));
  }

  get busySlots(): number {
    return this.slots.filter((s) => s.busy).length;
  }

  /** Gives the prompt an idle slot (the rules above); undefined when every slot is busy. */
  acquire(prompt: PromptBlocks): SlotLease | undefined {
    let chosen = -1;
    let bestCommon = 0;
    this.slots.forEach((s, i) => {
      if (s.busy || s.hashes.length === 0) return;
      const common = commonBlocks(s.hashes, prompt.hashes);
      if (common > bestCommon && common / s.hashes.length > this.similarity) {
        bestCommon = common;
        chosen = i;
      }
    });
    if (chosen < 0) {
      let oldest = Infinity;
      this.slots.forEach((s, i) => {
        if (!s.busy && s.lastUsed < oldest) {
          oldest = s.lastUsed;
          chosen = i;
        }
      });
    }
    if (chosen < 0) return undefined;
    const slot = this.slots[chosen]!;
    // the common prefix of the slot's prompt, less one token when it covers the whole prompt
    const common = commonBlocks(slot.hashes, prompt.hashes);
    const cachedTokens = Math.min(common * this.blockSize, Math.max(0, prompt.tokens - 1));
    slot.hashes = prompt.hashes;
    slot.busy = true;
    return { slot: chosen, cachedTokens };
  }

  /** The request on `slot` ended (finished or aborted): the slot is idle and keeps its prompt. */
  release(slot: number): void {
    const s = this.slots[slot];
    if (!s || !s.busy) return;
    s.busy = false;
    s.lastUsed = this.releases++;
  }

  /** Forgets every idle slot's prompt (POST /_sim/reset). */
  clearIdle(): void {
    for (const s of this.slots) if (!s.busy) s.hashes = [];
  }
}
