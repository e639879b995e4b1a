/**
 * Whether the results the reporter was given make one run's page. They do when every part comes
 * from one run (the same settings: compare.ts mergeDifferences), each cell and row was measured
 * once, and every cell and row the run planned is held by some part. The last two matter after
 * `vitest --merge-reports`: a stale blob beside this run's would give a cell two measurements,
 * and a shard whose blob was not downloaded would leave its cells off the page while the merge
 * exited 0. Pure: the reporter reads the tests and the blob folder, and says what these return.
 */
import type { RunInfo, SpeedMatrixMeta } from '../shapes/result.js';
import { testNameOfMeta, testNames } from '../shapes/labels.js';
import { mergeDifferences } from './compare.js';
import { maxOf, minOf } from '../extent.js';

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

const EVERY_BLOB = 'Every shard must upload its blob before the merge; a shard job that failed or was cancelled may have uploaded none: rerun it, then merge again';

const listed = (names: readonly string[], most = 8): string =>
  names.length <= most ? names.join(', ') : `${names.slice(0, most).join(', ')} and ${names.length - most} more`;

/**
 * Why the merged results cannot be one page because a part came twice: a matrix file in more than
 * one blob, or a test's result twice; undefined when each came once. Vitest 4.1 hands a file two
 * blobs hold on twice, Vitest 5 once (the other copy dropped), so the blobs are read for the files'
 * paths too. Either way one measurement would be dropped without a word: the merge fails.
 */
export function measuredTwiceMessage(metas: readonly SpeedMatrixMeta[], parts: MergedParts): string | undefined {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const meta of metas) {
    const name = testNameOfMeta(meta);
    if (name === undefined) continue;
    if (seen.has(name)) twice.add(name);
    seen.add(name);
  }
  const files = [...parts.blobsOfFile].filter(([, blobs]) => blobs.length > 1).map(([file, blobs]) => `${file} in ${blobs.join(' and ')}`);
  if (twice.size === 0 && files.length === 0) return undefined;
  const what = files.length > 0 ? listed(files, 4) : listed([...twice]);
  return (
    `part of this run is in more than one blob in ${parts.folder} (${what}), so no page is written (one page holds one measurement of each cell). ` +
    "Either the folder holds blobs of more than one run (a stale blob of an earlier run, a one-machine run's blob beside the shards'): empty it, put in this run's shard blobs only, and merge again; " +
    'or two bench files measure the same rows (two row-group files with the same index, or two files of one suite): give each its own rows'
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

/** What a merge holds, for the two checks below. */
export interface MergedParts {
  /** the blob folder */
  folder: string;
  /** the file names in it */
  blobFiles: readonly string[];
  /** the names of every test in the merged blobs */
  testNames: ReadonlySet<string>;
  /** the names of the matrix files' tests, in file order */
  matrixTestNames: readonly string[];
  /** the matrix files in the blobs that defined no test (their setup failed: the server was not reached, a config error) */
  filesWithoutTests: readonly string[];
  /** each matrix file of the merge, and the blobs that name it */
  blobsOfFile: ReadonlyMap<string, readonly string[]>;
}

/** Where the missing part went: absent blobs, files whose setup failed, else a blob left out; and what to do. */
function whereAndFix(parts: MergedParts): string {
  const shards = absentShardBlobs(parts.blobFiles);
  const where = [
    ...(shards.length > 0 ? [`${listed(shards)} ${shards.length === 1 ? 'is' : 'are'} not there`] : []),
    ...(parts.filesWithoutTests.length > 0
      ? [`${listed(parts.filesWithoutTests)} defined no cell (${parts.filesWithoutTests.length === 1 ? 'its' : 'their'} setup failed; the shard's log says why)`]
      : []),
  ];
  if (where.length === 0) return `a shard's blob is not there. ${EVERY_BLOB}`;
  const fixes = [
    ...(shards.length > 0 ? [EVERY_BLOB] : []),
    ...(parts.filesWithoutTests.length > 0 ? ['Fix what stopped those files on their shard (its LLM_BENCH_URL reachable there, say), rerun the shard, then merge again'] : []),
  ];
  return `${where.join('; ')}. ${fixes.join('. ')}`;
}

/**
 * Why a merge is missing part of its run: the planned cells and rows (collect.ts `incomplete.missing`:
 * a prefill row by its test's name, "prefill 1K", a cell by its key, "8K/4") that no test in the merged blobs stands for, so no shard's blob that was
 * merged ever held them; undefined when there are none. A test that is there but did not measure
 * (left out by -t, failed) is not counted: the run's own report says why.
 */
export function absentFromMergeMessage(missing: readonly string[], parts: MergedParts): string | undefined {
  const absent = missing.filter((item) => !parts.testNames.has(item.startsWith('prefill ') ? item : testNames.decode(item)));
  if (absent.length === 0) return undefined;
  return (
    `the merge lacks ${absent.length} planned cell${absent.length === 1 ? '' : 's'} or row${absent.length === 1 ? '' : 's'} that no blob in ${parts.folder} holds (${listed(absent)}; the page shows them Not run): ` +
    whereAndFix(parts)
  );
}

/** Why a merge whose matrix tests measured nothing (only an empty row group's shard, say) writes no page. */
export function nothingMeasuredMessage(parts: MergedParts): string {
  const tests = parts.matrixTestNames.length > 0 ? `their matrix tests: ${listed(parts.matrixTestNames.map((n) => `"${n}"`), 4)}` : 'no matrix test';
  const gap = absentShardBlobs(parts.blobFiles).length > 0 || parts.filesWithoutTests.length > 0 ? `: ${whereAndFix(parts)}` : '';
  return `the blobs in ${parts.folder} hold no measured cell or row (${tests}), so no page is written${gap}`;
}

/** More apart than this, the runs of a merge's blobs are likely not one run's shards. */
export const STALE_SPREAD_HOURS = 12;

/**
 * A note where the merged parts started more than STALE_SPREAD_HOURS apart: a stale blob standing in
 * for a shard whose own blob is missing is otherwise one run to every check (same settings, no cell
 * twice, none absent). Said, not failed: shards queued for one GPU runner may run hours apart.
 */
export function startSpreadNote(infos: readonly RunInfo[]): string | undefined {
  const starts = infos.map((i) => Date.parse(i.startedAt)).filter((t) => Number.isFinite(t));
  if (starts.length < 2) return undefined;
  const first = minOf(starts);
  const last = maxOf(starts);
  const hours = (last - first) / 3_600_000;
  if (hours <= STALE_SPREAD_HOURS) return undefined;
  return (
    `the merged blobs' parts started ${hours.toFixed(0)} h apart (${new Date(first).toISOString()} to ${new Date(last).toISOString()}): ` +
    "if one is a stale blob of an earlier run, its cells are on this page as this run's. Merge only this run's blobs"
  );
}
