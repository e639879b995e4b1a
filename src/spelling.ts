/**
 * "Did you mean": the edit distance between two names, and the nearest of a few known names to a
 * mistyped one. One copy for the command line's options and commands (meta/cli-args.ts), the
 * configuration's variables, profiles and workload keys (config/).
 */

/** Levenshtein distance (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/**
 * The closest of `names` to `given` when it is close enough to be a likely typo: at most
 * max(2, a third of its letters) edits away, letter case ignored.
 */
export function nearestName<T extends string>(given: string, names: readonly T[]): T | undefined {
  let best: { name: T; d: number } | undefined;
  for (const name of names) {
    const d = editDistance(given.toLowerCase(), name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(2, Math.floor(given.length / 3)) ? best.name : undefined;
}
