/**
 * Whether the results the reporter was given make one run's page. They do when every part comes
 * from one run (the same settings: compare.ts mergeDifferences), each cell and row was measured
 * once, and every cell and row the run planned is held by some part. The last two matter after
 * `vitest --merge-reports`: a stale blob beside this run's would give a cell two measurements,
 * and a shard whose blob was not downloaded would leave its cells off the page while the merge
 * exited 0. Pure: the reporter reads the tests and the blob folder, and says what these return.
 */
import type { RunInfo, SpeedMatrixMeta } from '../shapes/result.js';
import { cellKey, rateCellKey, testNames } from '../shapes/labels.js';
import { mergeDifferences } from './compare.js';

/** The distinct run infos the metas carry (every cell of one run carries the same; a merge one per shard). */
export function runInfosOf(metas: readonly SpeedMatrixMeta[], into = new Map<string, RunInfo>()): Map<string, RunInfo> {
  for (const m of metas) {
    if (!m.info) continue;
    const key = JSON.stringify(m.info);
    if (!into.has(key)) into.set(key, m.info);
  }
  return into;
}

/** Why these run infos cannot share one page, as one failure line; undefined when they can. */
export function mixedRunsMessage(infos: ReadonlyMap<string, RunInfo>): string | undefined {
  const differences = mergeDifferences([...infos.values()]);
  if (differences.length === 0) return undefined;
  return (
    `these results come from runs that measured different things, so no page is written (one page would mix their cells): ${differences.join('; ')}. ` +
    'Merge only the blobs of one run (every shard with the same settings against identical servers), or merge each run on its own into its own LLM_BENCH_OUT'
  );
}

/** the test a meta is the result of, by name (src/matrix/define.ts names them); undefined for the run meta */
function testNameOf(meta: SpeedMatrixMeta): string | undefined {
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

const EVERY_BLOB = 'Every shard must upload its blob before the merge; a shard job that failed or was cancelled may have uploaded none: rerun it, then merge again';

const listed = (names: readonly string[], most = 8): string =>
  names.length <= most ? names.join(', ') : `${names.slice(0, most).join(', ')} and ${names.length - most} more`;

/**
 * Why the merged results cannot be one page because a test's result came twice (two blobs of the
 * same row group: a stale blob of an earlier run, or a one-machine run's beside the shards');
 * undefined when each came once. The page would keep one of the two without saying which.
 */
export function measuredTwiceMessage(metas: readonly SpeedMatrixMeta[], folder: string): string | undefined {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const meta of metas) {
    const name = testNameOf(meta);
    if (name === undefined) continue;
    if (seen.has(name)) twice.add(name);
    seen.add(name);
  }
  if (twice.size === 0) return undefined;
  return (
    `${twice.size} cell${twice.size === 1 ? ' or row was' : 's or rows were'} measured in more than one blob in ${folder} (${listed([...twice])}), so no page is written (it would keep one of the measurements without saying which): ` +
    "the folder holds blobs of more than one run, such as a stale blob of an earlier run or a one-machine run's blob beside the shards'. Empty the folder, put in this run's shard blobs only, and merge again"
  );
}

/** The blob files a merge read, named as the workflow names them (blob-<shard>-<shards>.json): the shards whose blob is not there. */
export function absentShardBlobs(blobFiles: readonly string[]): string[] {
  const named = blobFiles.map((f) => /^blob-(\d+)-(\d+)\.json$/.exec(f));
  if (named.length === 0 || named.some((m) => m === null)) return [];
  const counts = new Set(named.map((m) => Number(m?.[2])));
  if (counts.size !== 1) return [];
  const shards = [...counts][0] ?? 0;
  const have = new Set(named.map((m) => Number(m?.[1])));
  const absent: string[] = [];
  for (let i = 1; i <= shards; i++) if (!have.has(i)) absent.push(`blob-${i}-${shards}.json`);
  return absent;
}

/**
 * Why a merge is missing part of its run: the planned cells and rows (collect.ts `incomplete.missing`,
 * "prefill 1K" or "8K/4") that no test in the merged blobs stands for, so no shard's blob that was
 * merged ever held them; undefined when there are none. A test that is there but did not measure
 * (left out by -t, failed) is not counted: the run's own report says why.
 */
export function absentFromMergeMessage(
  missing: readonly string[],
  mergedTestNames: ReadonlySet<string>,
  blobFiles: readonly string[],
  folder: string,
): string | undefined {
  const absent = missing.filter((item) => !mergedTestNames.has(item.startsWith('prefill ') ? item : testNames.decode(item)));
  if (absent.length === 0) return undefined;
  const shards = absentShardBlobs(blobFiles);
  const which = shards.length > 0 ? `${listed(shards)} ${shards.length === 1 ? 'is' : 'are'} not there` : "a shard's blob is not there";
  return (
    `the merge lacks ${absent.length} planned cell${absent.length === 1 ? '' : 's'} or row${absent.length === 1 ? '' : 's'} that no blob in ${folder} holds (${listed(absent)}; the page shows them Not run): ${which}. ` +
    EVERY_BLOB
  );
}

/** Why a merge whose matrix tests measured nothing (only an empty row group's shard, say) writes no page. */
export function nothingMeasuredMessage(matrixTestNames: readonly string[], blobFiles: readonly string[], folder: string): string {
  const shards = absentShardBlobs(blobFiles);
  const which = shards.length > 0 ? ` (${listed(shards)} ${shards.length === 1 ? 'is' : 'are'} not there)` : '';
  return (
    `the blobs in ${folder} hold no measured cell or row (their matrix tests: ${listed(matrixTestNames.map((n) => `"${n}"`), 4)}), so no page is written${which}. ` +
    EVERY_BLOB
  );
}
