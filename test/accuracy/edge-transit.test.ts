/**
 * The truth counts a chunk when the sim wrote it, the client when it read it: edgeTransitTokens
 * (harness.ts) finds the chunks that fall on the two sides of a window edge, which token-count
 * comparisons over short windows allow for. Scripted timelines, no server.
 */
import { describe, expect, test } from 'vitest';
import { edgeTransitTokens, type AccuracyCell, type TruthJson } from './harness.js';

function cellOf(written: [number, number][], read: [number, number][], windowStartMs = 100, windowEndMs = 200): AccuracyCell {
  const truth: TruthJson = { id: 'r1', receivedMs: 0, tokens: written, promptTokens: 10, cachedTokens: 0 } as TruthJson;
  return {
    raw: {
      windowStartMs,
      windowEndMs,
      timelines: [{ id: 'r1', sendMs: 0, chunkMs: read.map(([at]) => at), chunkTokens: read.map(([, n]) => n), tokenSource: 'local-tokenizer', reasoningTokens: 0 }],
    },
    truth: new Map([['r1', truth]]),
  } as unknown as AccuracyCell;
}

describe('edgeTransitTokens', () => {
  test('chunks read soon after they were written, away from the edges: none in transit', () => {
    const cell = cellOf([[50, 2], [150, 3], [250, 4]], [[51, 2], [151, 3], [251, 4]]);
    expect(edgeTransitTokens(cell)).toEqual({ tokens: 0, chunks: 0 });
  });

  test('a chunk written before the end and read after it, and one across the start: both counted', () => {
    const cell = cellOf([[99, 2], [150, 3], [199, 4], [250, 1]], [[101, 2], [151, 3], [203, 4], [251, 1]]);
    expect(edgeTransitTokens(cell)).toEqual({ tokens: 6, chunks: 2 });
  });

  test('two written chunks read in one: paired by running count, the pair straddling the end counts its own tokens', () => {
    // written 3 at 190 and 4 at 198; the client read 7 at once at 205
    const cell = cellOf([[150, 2], [190, 3], [198, 4]], [[151, 2], [205, 7]]);
    expect(edgeTransitTokens(cell)).toEqual({ tokens: 7, chunks: 2 });
  });

  test('a chunk written inside the window that the client never read (its stream cut at the end) is in transit; one written after the end adds nothing', () => {
    expect(edgeTransitTokens(cellOf([[150, 2], [199, 4]], [[151, 2]]))).toEqual({ tokens: 4, chunks: 1 });
    expect(edgeTransitTokens(cellOf([[150, 2], [201, 4]], [[151, 2]]))).toEqual({ tokens: 0, chunks: 0 });
    // each chunk written inside the window and never read counts (bare.test.ts bounds their number)
    expect(edgeTransitTokens(cellOf([[150, 2], [190, 3], [199, 4], [205, 1]], [[151, 2]]))).toEqual({ tokens: 7, chunks: 2 });
  });
});
