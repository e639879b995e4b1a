import { describe, expect, test } from 'vitest';
import { absentFromMergeMessage, absentShardBlobs, measuredTwiceMessage, type MergedParts, nothingMeasuredMessage, STALE_SPREAD_HOURS, startSpreadNote } from '../../src/judge/merge.js';
import type { SpeedMatrixMeta } from '../../src/shapes/result.js';
import { sglangCells, sglangInfo } from '../results/fixtures/sglang-h200.js';

const cellMetas = (): SpeedMatrixMeta[] => sglangCells().map((cell) => ({ kind: 'cell' as const, cell }));

const parts = (over: Partial<MergedParts> = {}): MergedParts => ({
  folder: '/tmp/blobs',
  blobFiles: ['blob-1-2.json'],
  testNames: new Set(['decode 0/1', 'prefill 1K', 'decode 1K/1']),
  matrixTestNames: [],
  filesWithoutTests: [],
  blobsOfFile: new Map(),
  ...over,
});

describe('a merge whose blobs hold a part twice', () => {
  test('each cell once, each file in one blob (the run meta of every shard file aside): nothing to say', () => {
    const info = sglangInfo();
    const metas: SpeedMatrixMeta[] = [{ kind: 'run', info }, { kind: 'run', info }, ...cellMetas().map((m) => ({ ...m, info }))];
    const once = new Map([['bench/shards/row-group-1.bench.ts', ['blob-1-2.json']], ['bench/shards/row-group-2.bench.ts', ['blob-2-2.json']]]);
    expect(measuredTwiceMessage(metas, parts({ blobsOfFile: once }))).toBeUndefined();
  });

  test('a file in two blobs (Vitest 5 hands it on once): the file and both blobs named, no page, the fix', () => {
    const twice = new Map([['bench/shards/row-group-1.bench.ts', ['blob-1-2-old.json', 'blob-1-2.json']], ['bench/shards/row-group-2.bench.ts', ['blob-2-2.json']]]);
    expect(measuredTwiceMessage(cellMetas(), parts({ blobsOfFile: twice }))).toBe(
      'part of this run is in more than one blob in /tmp/blobs (bench/shards/row-group-1.bench.ts in blob-1-2-old.json and blob-1-2.json), so no page is written (one page holds one measurement of each cell). ' +
        "Either the folder holds blobs of more than one run (a stale blob of an earlier run, a one-machine run's blob beside the shards'): empty it, put in this run's shard blobs only, and merge again; " +
        'or two bench files measure the same rows (two row-group files with the same index, or two files of one suite): give each its own rows',
    );
  });

  test("a test's result twice (Vitest 4.1 hands the file on twice; or two files of the same rows): the tests named", () => {
    const metas = cellMetas();
    const first = metas[0]!.kind === 'cell' ? metas[0]!.cell : undefined;
    const text = measuredTwiceMessage([...metas, metas[0]!, metas[1]!], parts());
    expect(text).toMatch(/^part of this run is in more than one blob in \/tmp\/blobs \(decode /);
    expect(text).toContain(`decode ${first?.contextLabel}/${first?.concurrency}`);
    const info = sglangInfo();
    const row = { context: 1024, contextLabel: '1K' } as unknown as Extract<SpeedMatrixMeta, { kind: 'prefill' }>['row'];
    expect(measuredTwiceMessage([{ kind: 'prefill', row, info }, { kind: 'prefill', row, info }], parts())).toMatch(/\(prefill 1K\), so no page is written/);
  });

  test('many cells: eight named, the rest counted', () => {
    const metas = cellMetas();
    expect(metas.length).toBeGreaterThan(10);
    expect(measuredTwiceMessage([...metas, ...metas], parts())).toMatch(new RegExp(`and ${metas.length - 8} more\\)`));
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

  test('every missing cell has its test in the merge (left out by -t, or failed): not a missing blob', () => {
    expect(absentFromMergeMessage(['0/1', 'prefill 1K'], parts())).toBeUndefined();
    expect(absentFromMergeMessage([], parts({ testNames: new Set() }))).toBeUndefined();
  });

  test('cells no blob holds: named, with the absent shard blob and the fix', () => {
    expect(absentFromMergeMessage(['prefill 2K', '0/1', '8K/4'], parts())).toBe(
      'the merge lacks 2 planned cells or rows that no blob in /tmp/blobs holds (prefill 2K, 8K/4; the page shows them Not run): blob-2-2.json is not there. ' +
        'Every shard must upload its blob before the merge; a shard job that failed or was cancelled may have uploaded none: rerun it, then merge again',
    );
  });

  test('blobs named otherwise: "a shard\'s blob"', () => {
    expect(absentFromMergeMessage(['8K/4'], parts({ blobFiles: ['mine.json'] }))).toMatch(/holds \(8K\/4; the page shows them Not run\): a shard's blob is not there\. Every shard must upload/);
  });

  test("every blob there, but a matrix file's setup failed: that file named, not a missing blob", () => {
    const text = absentFromMergeMessage(['8K/4'], parts({ blobFiles: ['blob-1-2.json', 'blob-2-2.json'], filesWithoutTests: ['bench/shards/row-group-2.bench.ts'] }));
    expect(text).toMatch(/: bench\/shards\/row-group-2\.bench\.ts defined no cell \(its setup failed; the shard's log says why\)\. Fix what stopped those files on their shard/);
    expect(text).not.toMatch(/not there|upload its blob/);
  });

  test('a merge that measured nothing names its tests, and the absent blob where one is', () => {
    const text = nothingMeasuredMessage(parts({ matrixTestNames: ['row group 3 of 4: no rows of this matrix'], blobFiles: ['blob-3-4.json'] }));
    expect(text).toMatch(/^the blobs in \/tmp\/blobs hold no measured cell or row \(their matrix tests: "row group 3 of 4: no rows of this matrix"\), so no page is written: blob-1-4.json, blob-2-4.json, blob-4-4.json are not there\. Every shard/);
    // every blob there and every file defined its tests: no advice to upload
    expect(nothingMeasuredMessage(parts({ matrixTestNames: ['row group 2 of 2: no rows of this matrix'], blobFiles: ['blob-1-2.json', 'blob-2-2.json'] }))).toMatch(/so no page is written$/);
  });
});

describe('parts that started far apart', () => {
  const at = (iso: string) => ({ ...sglangInfo(), startedAt: iso });

  test('shards of one run, an hour apart: nothing said', () => {
    expect(startSpreadNote([at('2026-12-05T10:00:00.000Z'), at('2026-12-05T11:00:00.000Z')])).toBeUndefined();
    expect(startSpreadNote([at('2026-12-05T10:00:00.000Z')])).toBeUndefined();
  });

  test(`more than ${STALE_SPREAD_HOURS} h apart: said, with both times`, () => {
    expect(startSpreadNote([at('2026-12-05T10:00:00.000Z'), at('2026-12-04T09:00:00.000Z'), at('2026-12-05T10:05:00.000Z')])).toBe(
      "the merged blobs' parts started 25 h apart (2026-12-04T09:00:00.000Z to 2026-12-05T10:05:00.000Z): if one is a stale blob of an earlier run, its cells are on this page as this run's. Merge only this run's blobs",
    );
  });
});
