/**
 * The `llm-speed-matrix` command: `init` sets a project up; `sim` serves the embedded simulator; `compare` diffs two result
 * files; `report` draws one or several as HTML. The matrix itself runs under Vitest (`npx vitest bench --run`).
 */
import { debugErrors } from './config/env.js';
import { ConfigError } from './errors.js';
import { suggest } from './meta/cli-args.js';
import { packageInfo } from './meta/package.js';

const USAGE = `usage: llm-speed-matrix <command> [options]

commands:
  init [--force] [--shards N] [--dir PATH]
        set up the speed matrix in this project: bench files, vitest.config.ts (.mts in a CommonJS package), thresholds/,
        a GitHub Actions workflow (never overwrites without --force)
  sim [--profile NAME] [--port N] [--host H] [--personality vllm|sglang|llamacpp|tgi|trtllm|ollama|bare] [--tokenizer-json PATH]
      [--llamacpp-metrics b4748|current|off] [--llamacpp-slots on|off]
        serve the embedded simulated inference server (default profile tiny, port 8000); --tokenizer-json
        first writes its tokenizer as a Hugging Face tokenizer.json (for LLM_BENCH_TOKENIZER)
  compare <base.json> <new.json> [--out diff.md] [--thresholds FILE]
        compare two speed-matrix.json files; exit 1 on a regression beyond tolerance
  report <a.json> [b.json …] [--label NAME …] [--out FILE]
        the HTML report of one result, or one page overlaying several (ratios to the first)
  help [command]
        this text, or a command's own options (also: <command> --help)
  version
        the package version (also: --version, -v)

Run the speed matrix itself with:  npx vitest bench --run   (see README.md)`;

const COMMANDS = ['init', 'sim', 'compare', 'report', 'help', 'version'] as const;

/** A command's own usage text, for `help <command>` (each module is loaded only when asked for). */
async function usageOf(command: string): Promise<string | undefined> {
  switch (command) {
    case 'init':
      return (await import('./init/init.js')).INIT_USAGE;
    case 'sim':
      return (await import('./sim/cli.js')).SIM_USAGE;
    case 'compare':
      return (await import('./compare/cli.js')).COMPARE_USAGE;
    case 'report':
      return (await import('./report/cli.js')).REPORT_USAGE;
    case 'help':
    case 'version':
      return USAGE;
    default:
      return undefined;
  }
}

function unknownCommand(command: string): string {
  const near = suggest(command, COMMANDS);
  return `unknown command "${command}"${near ? ` (did you mean ${near}?)` : ''}\n\n${USAGE}`;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'sim': {
        const { runSimCli } = await import('./sim/cli.js');
        return await runSimCli(rest);
      }
      case 'init': {
        const { runInitCli } = await import('./init/init.js');
        return runInitCli(rest);
      }
      case 'report': {
        const { runReportCli } = await import('./report/cli.js');
        return await runReportCli(rest);
      }
      case 'compare': {
        const { runCompareCli } = await import('./compare/cli.js');
        return await runCompareCli(rest);
      }
      case 'version':
      case '--version':
      case '-v':
      case '-V':
        console.log(packageInfo().version);
        return 0;
      case 'help': {
        const topic = rest[0];
        if (topic === undefined) {
          console.log(USAGE);
          return 0;
        }
        const usage = await usageOf(topic);
        if (usage === undefined) {
          console.error(unknownCommand(topic));
          return 2;
        }
        console.log(usage);
        return 0;
      }
      case undefined:
      case '--help':
      case '-h':
        console.log(USAGE);
        return command === undefined ? 1 : 0;
      default:
        console.error(unknownCommand(command));
        return 2;
    }
  } catch (err) {
    // user-facing failures (unknown profile, port in use, bad file) are one clear line;
    // LLM_BENCH_DEBUG=1 shows the stack
    if (err instanceof Error && !debugErrors()) {
      console.error(`llm-speed-matrix: ${err.message}`);
      return err instanceof ConfigError ? 2 : 1;
    }
    throw err;
  }
}
