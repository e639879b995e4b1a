/**
 * `llm-speed-matrix report <a.json> [b.json …] [--label NAME …] [--out FILE]`: one result → its
 * report page (as the reporter writes speed-matrix.html); two or more → a comparison page that
 * overlays them, each run named by its --label (in order) or from its run info.
 * Exit 0: written; 2: usage error, or a file that cannot be read (wrong schema version, invalid).
 */
import { parseCommandArgs, type OptionSpec } from '../meta/cli-args.js';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { loadResultFile } from '../compare/load.js';
import { ensureDir, writeFileAtomic } from '../results/write.js';
import { renderCompareHtml, runDifferences, runName } from '../pages/compare-html.js';
import { renderHtml } from '../pages/html.js';
import { maxOf } from '../extent.js';

export const REPORT_USAGE = `usage: llm-speed-matrix report <a.json> [b.json …] [--label NAME …] [--out FILE]

One speed-matrix.json: its HTML report. Two or more: one page that overlays them (charts per run,
each cell's ratios to the first run).
  --label NAME  name of the next run, in the order of the files (default: engine, version, start time)
  --out FILE    where to write the page (default: report.html, or compare.html for several runs)
  -h, --help    this text`;

export interface ReportIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

const defaultIo: ReportIo = {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
};

interface ReportArgs {
  files: string[];
  labels: string[];
  out?: string;
}

const REPORT_OPTIONS: Record<string, OptionSpec> = {
  label: { type: 'string', multiple: true, what: 'a name', example: '--label fp8' },
  out: { type: 'string', what: 'a file name', example: '--out compare.html' },
};

/** The arguments, 'help' for --help/-h, or a message (the shared parser: src/meta/cli-args.ts). */
function parseArgs(argv: readonly string[]): ReportArgs | string {
  const parsed = parseCommandArgs(argv, REPORT_OPTIONS, true);
  if (parsed.kind === 'help') return 'help';
  if (parsed.kind === 'error') return parsed.message;
  const { label, out } = parsed.values as { label?: string[]; out?: string };
  const args: ReportArgs = { files: parsed.positionals, labels: label ?? [], ...(out ? { out } : {}) };
  if (args.files.length === 0) return 'give at least one speed-matrix.json';
  if (args.labels.length > args.files.length) return `${args.labels.length} labels for ${args.files.length} files; give at most one --label per file`;
  return args;
}

export async function runReportCli(argv: readonly string[], io: ReportIo = defaultIo): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    if (args === 'help') {
      io.out(REPORT_USAGE);
      return 0;
    }
    io.err(`llm-speed-matrix report: ${args}\n\n${REPORT_USAGE}`);
    return 2;
  }
  try {
    const results = args.files.map((file) => loadResultFile(file, file));
    const runs = distinctLabels(args.files, args.labels, results.map(runName)).map((label, i) => ({ label, result: results[i]! }));
    const labels = runs.map((r) => r.label);
    const twice = labels.find((l, i) => labels.indexOf(l) !== i);
    if (twice !== undefined) throw new ConfigError(`two runs are named "${twice}" (the same file twice?); tell them apart with --label, one per file in order`);
    // runs of different matrices are overlaid, not refused (compare refuses them): said here and on the page
    const differences = runs.length > 1 ? runDifferences(runs) : [];
    if (differences.length > 0) io.err(`llm-speed-matrix report: warning: these runs measured different things (the page says so too):\n  ${differences.join('\n  ')}`);
    const html = runs.length === 1 ? renderHtml(runs[0]!.result) : renderCompareHtml(runs);
    const out = resolve(args.out ?? (runs.length === 1 ? 'report.html' : 'compare.html'));
    try {
      ensureDir(dirname(out));
      writeFileAtomic(out, html);
    } catch (error) {
      throw new ConfigError(`--out ${out}: cannot write the page there (${(error as Error).message}); give a path in a folder you can write, e.g. --out reports/report.html`);
    }
    io.out(`wrote ${out} (${runs.length === 1 ? 'one run' : `${runs.length} runs: ${labels.join(', ')}`})`);
    return 0;
  } catch (error) {
    io.err(`llm-speed-matrix report: ${(error as Error).message}`);
    return 2;
  }
}

/**
 * The name of each run: its --label, else its run info (engine, version, start time). Runs whose
 * names would be the same (two runs started in the same minute) are named by their files instead
 * (`a.json`, then `folder/a.json` where the file names match too). Two equal --label values are an
 * error: the user chose them.
 */
export function distinctLabels(files: readonly string[], given: readonly string[], fromInfo: readonly string[]): string[] {
  const twiceGiven = given.find((l, i) => given.indexOf(l) !== i);
  if (twiceGiven !== undefined) throw new ConfigError(`--label "${twiceGiven}" is given twice; give each run its own name`);
  const named = files.map((_, i) => given[i] ?? fromInfo[i]!);
  const clashes = named.map((l, i) => given[i] === undefined && named.filter((m) => m === l).length > 1);
  if (!clashes.includes(true)) return named;
  const tail = (file: string, depth: number): string => file.split(/[\\/]/).filter((p) => p !== '').slice(-depth).join('/');
  for (let depth = 1; ; depth++) {
    const names = named.map((l, i) => (clashes[i] ? tail(files[i]!, depth) : l));
    const longest = maxOf(files.map((f) => f.split(/[\\/]/).length));
    if (new Set(names).size === names.length || depth >= longest) return names;
  }
}
