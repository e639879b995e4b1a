/**
 * `llm-speed-matrix sim --profile NAME --port N [--host H] [--personality vllm|sglang|llamacpp|tgi|trtllm|ollama|bare] [--tokenizer-json PATH]
 * [--llamacpp-metrics b4748|current|off] [--llamacpp-slots on|off]`: serves the simulator until the process is stopped.
 * `--tokenizer-json PATH` first writes the sim's tokenizer as a Hugging Face tokenizer.json (src/sim/tokenizer-json.ts),
 * the local tokenizer (LLM_BENCH_TOKENIZER) that counts exactly as the sim does.
 */
import { writeFileSync } from 'node:fs';
import { simTokenizerJsonText } from './tokenizer-json.js';

import { createSimServer, type SimServer } from './server.js';
import { LLAMACPP_METRICS_NAMES, resolveSimProfile, SIM_PERSONALITY_NAMES, SIM_PROFILES, type LlamacppMetricsNames, type SimPersonality, type SimProfileOverrides } from './profiles.js';

export const SIM_USAGE =
  'usage: llm-speed-matrix sim [--profile NAME] [--port N] [--host H] [--personality vllm|sglang|llamacpp|tgi|trtllm|ollama|bare] [--tokenizer-json PATH]\n' +
  '                            [--llamacpp-metrics b4748|current|off] [--llamacpp-slots on|off]\n' +
  `  profiles: ${Object.keys(SIM_PROFILES).join(', ')} (default tiny); port default 8000 (0 = any free port); host default 127.0.0.1\n` +
  '  --tokenizer-json PATH: write the sim\'s tokenizer.json there first (for LLM_BENCH_TOKENIZER)\n' +
  '  llama.cpp personality: --llamacpp-metrics picks the /metrics names (default b4748; current: today\'s, no decode counters; off: no --metrics),\n' +
  '  --llamacpp-slots off answers /slots with 501 (no --slots)';

export interface SimCliArgs {
  profile: string;
  port: number;
  host: string;
  personality?: SimPersonality;
  /** write the sim's tokenizer.json here before serving */
  tokenizerJson?: string;
  llamacppMetrics?: LlamacppMetricsNames;
  llamacppSlots?: boolean;
}

export function parseSimArgs(argv: readonly string[]): SimCliArgs {
  const out: SimCliArgs = { profile: 'tiny', port: 8000, host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const takeValue = (): string => {
      const v = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '') throw new Error(`${flag} needs a value\n${SIM_USAGE}`);
      return v;
    };
    switch (flag) {
      case '--profile':
        out.profile = takeValue();
        break;
      case '--port': {
        const v = takeValue();
        const n = Number(v);
        if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--port ${v} is invalid: use an integer 0–65535 (0 = any free port)`);
        out.port = n;
        break;
      }
      case '--host':
        out.host = takeValue();
        break;
      case '--personality': {
        const v = takeValue();
        if (!(SIM_PERSONALITY_NAMES as readonly string[]).includes(v)) {
          throw new Error(`--personality ${v} is invalid: use one of ${SIM_PERSONALITY_NAMES.join(', ')}`);
        }
        out.personality = v as SimPersonality;
        break;
      }
      case '--tokenizer-json':
        out.tokenizerJson = takeValue();
        break;
      case '--llamacpp-metrics': {
        const v = takeValue();
        if (!(LLAMACPP_METRICS_NAMES as readonly string[]).includes(v)) {
          throw new Error(`--llamacpp-metrics ${v} is invalid: use one of ${LLAMACPP_METRICS_NAMES.join(', ')}`);
        }
        out.llamacppMetrics = v as LlamacppMetricsNames;
        break;
      }
      case '--llamacpp-slots': {
        const v = takeValue();
        if (v !== 'on' && v !== 'off') throw new Error(`--llamacpp-slots ${v} is invalid: use on or off`);
        out.llamacppSlots = v === 'on';
        break;
      }
      case '--help':
      case '-h':
        throw new Error(SIM_USAGE);
      default:
        throw new Error(`unknown option ${arg} for sim\n${SIM_USAGE}`);
    }
  }
  return out;
}

/** Starts the sim from CLI arguments and writes its URL to `out`; the caller owns closing it. */
export async function startSimCli(argv: readonly string[], out: (line: string) => void): Promise<SimServer> {
  const args = parseSimArgs(argv);
  if (args.tokenizerJson !== undefined) {
    try {
      writeFileSync(args.tokenizerJson, simTokenizerJsonText());
    } catch (error) {
      throw new Error(`--tokenizer-json ${args.tokenizerJson}: cannot write it (${(error as Error).message}); give a writable file path`);
    }
    out(`sim tokenizer written to ${args.tokenizerJson} (LLM_BENCH_TOKENIZER=${args.tokenizerJson})\n`);
  }
  const overrides: SimProfileOverrides = {};
  if (args.llamacppMetrics !== undefined) overrides.llamacppMetrics = args.llamacppMetrics;
  if (args.llamacppSlots !== undefined) overrides.llamacppSlots = args.llamacppSlots;
  const profile = resolveSimProfile(args.profile, overrides, args.personality);
  const sim = createSimServer(profile);
  const url = await sim.listen(args.host, args.port);
  out(
    `sim ${profile.name} (${profile.personality}, model ${profile.modelId}) listening on ${url}\n` +
      `  ground truth: ${url}/_sim/truth/<X-Request-Id>, state: ${url}/_sim/state\n`,
  );
  return sim;
}

/** `llm-speed-matrix sim …`: prints the URL and serves until SIGINT/SIGTERM; resolves once listening. */
export async function runSimCli(argv: string[]): Promise<void> {
  const sim = await startSimCli(argv, (line) => process.stdout.write(line));
  const stop = (): void => {
    void sim.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
