/**
 * The word-at-a-time string end (json-tokens.ts stringEndWords, the shape memo's reading of a
 * string hole) against the byte-at-a-time one it shortens: the same end, and the same escape flag,
 * for strings of every byte class at every alignment and with the buffer ending anywhere.
 */
import { describe, expect, it } from 'vitest';
import * as tokens from '../../src/client/json-tokens.js';
import { mulberry32 } from '../../src/random.js';

describe('stringEndWords', () => {
  it('gives stringEnd’s end and escape flag for 50,000 seeded strings: plain ASCII, bytes 0x80 and up, control bytes, quotes, escapes', () => {
    const rand = mulberry32(24);
    // byte classes: plain, high (UTF-8 bytes), the three a word test must stop at, and the bytes just around them
    const PIECES: number[][] = [
      [0x61], [0x7a], [0x20], [0x7f], [0x80], [0xe6, 0x97, 0xa5], [0xff], [0x21], [0x23], [0x5b], [0x5d],
      [0x1f], [0x00], [0x0a], [0x22], [0x5c, 0x22], [0x5c, 0x5c], [0x5c, 0x6e], [0x5c, 0x75, 0x30, 0x30, 0x34, 0x31], [0x5c, 0x78], [0x5c],
    ];
    let checked = 0;
    let escapes = 0;
    for (let i = 0; i < 50_000; i++) {
      const lead = Math.floor(rand() * 4); // the opening quote at every alignment
      const bytes: number[] = Array.from({ length: lead }, () => 0x20);
      bytes.push(0x22);
      const n = Math.floor(rand() * 24);
      // mostly plain runs, so whole words are skipped, with a special byte now and then
      for (let k = 0; k < n; k++) bytes.push(...(rand() < 0.75 ? PIECES[Math.floor(rand() * 2)]! : PIECES[Math.floor(rand() * PIECES.length)]!));
      if (rand() < 0.8) bytes.push(0x22);
      bytes.push(...Array.from({ length: Math.floor(rand() * 6) }, () => 0x2c));
      const b = Buffer.from(bytes);
      const e = rand() < 0.2 ? Math.floor(rand() * (b.length + 1)) : b.length;
      if (e <= lead) continue;
      // inside a larger buffer, as a socket read holds it
      const host = Buffer.concat([Buffer.from('xyz'), b]);
      const at = host.subarray(3);
      const view = new DataView(at.buffer, at.byteOffset, at.byteLength);
      const slow = tokens.stringEnd(at, lead, e);
      const slowEscape = tokens.stringHadEscape;
      const fast = tokens.stringEndWords(view, at, lead, e);
      expect(fast, `${JSON.stringify(b.toString('latin1'))} ending at ${e}`).toBe(slow);
      if (slow >= 0) {
        expect(tokens.stringHadEscape).toBe(slowEscape);
        if (slowEscape) escapes++;
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(40_000);
    expect(escapes).toBeGreaterThan(1_000);
  });
});
