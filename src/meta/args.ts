/**
 * Command-line options shared by the `llm-speed-matrix` subcommands: `--name value` or
 * `--name=value` at argv[i]. Returns the value (undefined when it is missing, or when the next
 * argument is another option) and the index of the last argument it used.
 */
export function takeOption(argv: readonly string[], i: number, name: string): { value: string | undefined; last: number } {
  const a = argv[i]!;
  if (a.startsWith(`${name}=`)) return { value: a.slice(name.length + 1), last: i };
  const v = argv[i + 1];
  return { value: v === undefined || v.startsWith('--') ? undefined : v, last: i + 1 };
}

