/**
 * The one argument parser of the `llm-speed-matrix` subcommands: Node's `util.parseArgs` (strict,
 * built in), wrapped so every command gets the same conventions:
 *   - `--help` / `-h` anywhere: the caller prints its usage on stdout and exits 0;
 *   - `--name value` and `--name=value`; a value that is missing, or is the next option, is an
 *     error naming the option and an example;
 *   - an unknown option is an error with the nearest known option as a suggestion
 *     (`unknown option "--forse" (did you mean --force?)`).
 * Errors are messages (strings) so each command keeps its own way of printing them with its usage.
 */
import { parseArgs } from 'node:util';
import { nearestName } from '../spelling.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** for a missing value: what it needs ("a file name") and an example (`--out diff.md`) */
  what?: string;
  example?: string;
}

export type ParsedValues = Record<string, string | boolean | string[] | undefined>;

export type ParsedCommand =
  | { kind: 'help' }
  | { kind: 'error'; message: string }
  | { kind: 'ok'; values: ParsedValues; positionals: string[] };

/** The closest of `names` to `given`, when it is close enough to be a likely typo. */
export function suggest(given: string, names: readonly string[]): string | undefined {
  return nearestName(given, names);
}

export function parseCommandArgs(argv: readonly string[], options: Record<string, OptionSpec>, allowPositionals: boolean): ParsedCommand {
  if (argv.some((a) => a === '--help' || a === '-h')) return { kind: 'help' };
  const config: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [name, o] of Object.entries(options)) {
    config[name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  }
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: config, strict: true, allowPositionals });
    // `--out=` gives an empty string: as missing as no value at all
    for (const [name, value] of Object.entries(values)) {
      const empty = value === '' || (Array.isArray(value) && value.includes(''));
      if (empty) return { kind: 'error', message: missingValue(name, options[name]) };
    }
    return { kind: 'ok', values: values as ParsedValues, positionals };
  } catch (error) {
    return { kind: 'error', message: explain(error, argv, options) };
  }
}

function missingValue(name: string, spec: OptionSpec | undefined): string {
  return `--${name} needs ${spec?.what ?? 'a value'}${spec?.example ? `, e.g. ${spec.example}` : ''}`;
}

/** parseArgs' errors, in this project's words. */
function explain(error: unknown, argv: readonly string[], options: Record<string, OptionSpec>): string {
  const e = error as { code?: string; message?: string };
  const names = Object.keys(options).map((n) => `--${n}`);
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const given = /option '([^']+)'/.exec(e.message ?? '')?.[1] ?? argv.find((a) => a.startsWith('-') && !names.includes(a.split('=')[0]!)) ?? '?';
    const bare = given.split('=')[0]!;
    const near = suggest(bare, names);
    return `unknown option "${given}"${near ? ` (did you mean ${near}?)` : ''}`;
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const name = /'--([a-z-]+)/.exec(e.message ?? '')?.[1];
    if (name && options[name]?.type === 'string') return missingValue(name, options[name]);
    if (name) return `--${name} takes no value`;
  }
  if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const extra = /argument '([^']*)'/.exec(e.message ?? '')?.[1];
    return `unexpected argument "${extra ?? '?'}"`;
  }
  return e.message ?? String(error);
}
