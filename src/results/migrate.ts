/**
 * Result files of earlier schema versions, read as the current one. The schema version is bumped
 * on any change an older reader would refuse; each step below says what changed.
 *
 *   1 → 2: open-loop rate cells (`rateCells`, `info.settings.rates`) were added. A version-1 file
 *          is a version-2 file without them: nothing else changed, so only the number moves.
 */

/** The schema version this tool writes. */
export const RESULT_SCHEMA_VERSION = 2;

/** The oldest version it still reads (migrating it). */
export const OLDEST_READABLE_VERSION = 1;

/** A parsed result of a readable older version, moved to the current one in place; others unchanged. */
export function migrateResultJson(json: unknown): unknown {
  if (typeof json !== 'object' || json === null) return json;
  const file = json as { schemaVersion?: unknown };
  if (file.schemaVersion === 1) file.schemaVersion = 2;
  return json;
}
