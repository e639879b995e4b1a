import { describe, expect, test } from 'vitest';
import { absentFromMergeMessage, absentShardBlobs, measuredTwiceMessage, nothingMeasuredMessage } from '../../src/judge/merge.js';
import type { SpeedMatrixMeta } from '../../src/shapes/result.js';
import { sglangCells, sglangInfo } from '../results/fixtures/sglang-h200.js';

const cellMetas = (): SpeedMatrixMeta[] => sglangCells().map((cell) => ({ kind: 'cell' as const, cell }));

describe('a merge whose blobs hold a cell twice', () => {
  test('each cell once (the run meta of every shard file aside): nothing to say', () => {
    const info = sglangInfo();
    const metas: SpeedMatrixMeta[] = [{ kind: 'run', info }, { kind: 'run', info }, ...cellMetas()];
    expect(measuredTwiceMessage(metas, '/b')).toBeUndefined();
  });

  test('a stale blob of the same row group: the cells named, no page, the fix', () => {
    const metas = cellMetas();
    const twice = [...metas, metas[0]!, metas[1]!];
    const first = metas[0]!.kind === 'cell' ? metas[0]!.cell : undefined;
    const text = measuredTwiceMessage(twice, '/tmp/blobs');
    expect(text).toMatch(/^2 cells or rows were measured in more than one blob in \/tmp\/blobs \(decode /);
    expect(text).toContain(`decode ${first?.contextLabel}/${first?.concurrency}`);
    expect(text).toMatch(/no page is written/);
    expect(text).toMatch(/Empty the folder, put in this run's shard blobs only, and merge again$/);
  });

  test('a prefill row twice is named as its test is', () => {
    const info = sglangInfo();
    const row = { context: 1024, contextLabel: '1K' } as unknown as Extract<SpeedMatrixMeta, { kind: 'prefill' }>['row'];
    const text = measuredTwiceMessage([{ kind: 'prefill', row, info }, { kind: 'prefill', row, info }], '/b');
    expect(text).toMatch(/^1 cell or row was measured in more than one blob in \/b \(prefill 1K\)/);
  });

  test('many cells: eight named, the rest counted', () => {
    const metas = cellMetas();
    expect(metas.length).toBeGreaterThan(10);
    expect(measuredTwiceMessage([...metas, ...metas], '/b')).toMatch(new RegExp(`and ${metas.length - 8} more\\)`));
  });
});

describe('the shards whose blob is not in the folder', () => {
  test('named blob-<shard>-<shards>.json: the absent ones', () => {
    expect(absentShardBlobs(['blob-1-4.json', 'blob-3-4.json'])).toEqual(['blob-2-4.json', 'blob-4-4.json']);
    expect(absentShardBlobs(['blob-2-2.json', 'blob-1-2.json'])).toEqual([]);
  });

  test('other names, or two shard counts: not guessed', () => {
    expect(absentShardBlobs(['blob-1-2.json', 'report.json'])).toEqual([]);
    expect(absentShardBlobs(['blob-1-2.json', 'blob-1-4.json'])).toEqual([]);
    expect(absentShardBlobs([])).toEqual([]);
  });
});

describe('a merge that lacks planned cells', () => {
  const tests = new Set(['decode 0/1', 'prefill 1K', 'decode 1K/1']);

  test('every missing cell has its test in the merge (left out by -t, or failed): not a missing blob', () => {
    expect(absentFromMergeMessage(['0/1', 'prefill 1K'], tests, ['blob-1-2.json'], '/b')).toBeUndefined();
    expect(absentFromMergeMessage([], new Set(), ['blob-1-2.json'], '/b')).toBeUndefined();
  });

  test('cells no blob holds: named, with the absent shard blob and the fix', () => {
    const text = absentFromMergeMessage(['prefill 2K', '0/1', '8K/4'], tests, ['blob-1-2.json'], '/tmp/blobs');
    expect(text).toBe(
      'the merge lacks 2 planned cells or rows that no blob in /tmp/blobs holds (prefill 2K, 8K/4; the page shows them Not run): blob-2-2.json is not there. ' +
        'Every shard must upload its blob before the merge; a shard job that failed or was cancelled may have uploaded none: rerun it, then merge again',
    );
  });

  test('blobs named otherwise: "a shard\'s blob"', () => {
    expect(absentFromMergeMessage(['8K/4'], tests, ['mine.json'], '/b')).toMatch(/holds \(8K\/4; the page shows them Not run\): a shard's blob is not there\./);
  });

  test('a merge that measured nothing names its tests and the absent blob', () => {
    const text = nothingMeasuredMessage(['row group 3 of 4: no rows of this matrix'], ['blob-3-4.json'], '/b');
    expect(text).toMatch(/^the blobs in \/b hold no measured cell or row \(their matrix tests: "row group 3 of 4: no rows of this matrix"\), so no page is written \(blob-1-4.json, blob-2-4.json, blob-4-4.json are not there\)\. Every shard/);
  });
});
