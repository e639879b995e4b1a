/**
 * The project's one seeded PRNG (deterministic prompts, simulator EOS and fault draws):
 * mulberry32, small and fast, returning floats in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a over a string range, 32 bits. */
export function fnv1a(text: string, start = 0, end = text.length, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = start; i < end; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
