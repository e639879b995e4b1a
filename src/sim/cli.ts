/**
 * `llm-speed-matrix sim --profile NAME --port N [--host H] [--personality vllm|sglang|llamacpp|tgi|trtllm|ollama|bare] [--tokenizer-json PATH]
 * [--llamacpp-metrics b4748|current|off] [--llamacpp-slots on|off] [--overrides JSON]`: serves the simulator until the process is stopped.
 * `--overrides` takes profile fields as LLM_BENCH_SIM_OVERRIDES does (e.g. a server of 256 slots for a scale run in a process of its own).
 * `--tokenizer-json PATH` first writes the sim's tokenizer as a Hugging Face tokenizer.json (src/sim/tokenizer-json.ts),
 * the local tokenizer (LLM_BENCH_TOKENIZER) that counts exactly as the sim does.
 */
import { writeFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { parseCommandArgs, type OptionSpec } from '../meta/cli-args.js';
import { simTokenizerJsonText } from './tokenizer-json.js';

import { createSimServer, type SimServer } from './server.js';
import { checkSimOverrides, getSimProfile, LLAMACPP_METRICS_NAMES, resolveSimProfile, SIM_PERSONALITY_NAMES, SIM_PROFILES, type LlamacppMetricsNames, type SimPersonality, type SimProfileOverrides } from './profiles.js';

export const SIM_USAGE =
  'usage: llm-speed-matrix sim [--profile NAME] [--port N] [--host H] [--personality vllm|sglang|llamacpp|tgi|trtllm|ollama|bare] [--tokenizer-json PATH]\n' +
  '                            [--llamacpp-metrics b4748|current|off] [--llamacpp-slots on|off] [--overrides JSON]\n' +
  `  profiles: ${Object.keys(SIM_PROFILES).join(', ')} (default tiny); port default 8000 (0 = any free port); host default 127.0.0.1\n` +
  '  --tokenizer-json PATH: write the sim\'s tokenizer.json there first (for LLM_BENCH_TOKENIZER)\n' +
  '  llama.cpp personality: --llamacpp-metrics picks the /metrics names (default b4748; current: today\'s, no decode counters; off: no --metrics),\n' +
  '  --llamacpp-slots off answers /slots with 501 (no --slots)\n' +
  '  --overrides JSON: profile fields, as LLM_BENCH_SIM_OVERRIDES, e.g. --overrides \'{"maxRunningRequests":256,"kvCapacityTokens":4000000}\'';

export interface SimCliArgs {
  profile: string;
  port: number;
  host: string;
  personality?: SimPersonality;
  /** write the sim's tokenizer.json here before serving */
  tokenizerJson?: string;
  llamacppMetrics?: LlamacppMetricsNames;
  llamacppSlots?: boolean;
  /** --overrides: profile fields, checked against the profile */
  overrides?: SimProfileOverrides;
}

/** sim's options, for the shared parser (src/meta/cli-args.ts); values are checked below. */
const SIM_OPTIONS: Record<string, OptionSpec> = {
  profile: { type: 'string', what: 'a profile name', example: '--profile tiny' },
  port: { type: 'string', what: 'a port number', example: '--port 0' },
  host: { type: 'string', what: 'a host', example: '--host 127.0.0.1' },
  personality: { type: 'string', what: 'an engine personality', example: '--personality bare' },
  'tokenizer-json': { type: 'string', what: 'a file path', example: '--tokenizer-json tokenizer.json' },
  'llamacpp-metrics': { type: 'string', what: `one of ${LLAMACPP_METRICS_NAMES.join(', ')}`, example: '--llamacpp-metrics current' },
  'llamacpp-slots': { type: 'string', what: 'on or off', example: '--llamacpp-slots off' },
  overrides: { type: 'string', what: 'a JSON object of profile fields', example: '--overrides \'{"maxRunningRequests":256}\'' },
};

/**
 * sim's arguments; `--help` / `-h` gives `'help'` when allowed (the caller prints SIM_USAGE on
 * stdout, exit 0), else a ConfigError carrying the usage. Every mistake is a ConfigError (exit 2)
 * naming the option and the fix, followed by the usage.
 */
export function parseSimArgs(argv: readonly string[]): SimCliArgs;
export function parseSimArgs(argv: readonly string[], help: 'allow-help'): SimCliArgs | 'help';
export function parseSimArgs(argv: readonly string[], help?: 'allow-help'): SimCliArgs | 'help' {
  const parsed = parseCommandArgs(argv, SIM_OPTIONS, false);
  if (parsed.kind === 'help') {
    if (help) return 'help';
    throw new ConfigError(SIM_USAGE);
  }
  if (parsed.kind === 'error') throw new ConfigError(`sim: ${parsed.message}\n${SIM_USAGE}`);
  const v = parsed.values as Record<string, string | undefined>;
  const out: SimCliArgs = { profile: v.profile ?? 'tiny', port: 8000, host: v.host ?? '127.0.0.1' };
  try {
    getSimProfile(out.profile);
  } catch (error) {
    throw new ConfigError(`--profile ${out.profile} is invalid: ${(error as Error).message}`);
  }
  if (v.port !== undefined) {
    const n = Number(v.port);
    if (!/^\d+$/.test(v.port) || !Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`--port ${v.port} is invalid: use an integer 0–65535 (0 = any free port)`);
    out.port = n;
  }
  if (v.personality !== undefined) {
    if (!(SIM_PERSONALITY_NAMES as readonly string[]).includes(v.personality)) {
      throw new ConfigError(`--personality ${v.personality} is invalid: use one of ${SIM_PERSONALITY_NAMES.join(', ')}`);
    }
    out.personality = v.personality as SimPersonality;
  }
  if (v['tokenizer-json'] !== undefined) out.tokenizerJson = v['tokenizer-json'];
  const metrics = v['llamacpp-metrics'];
  if (metrics !== undefined) {
    if (!(LLAMACPP_METRICS_NAMES as readonly string[]).includes(metrics)) {
      throw new ConfigError(`--llamacpp-metrics ${metrics} is invalid: use one of ${LLAMACPP_METRICS_NAMES.join(', ')}`);
    }
    out.llamacppMetrics = metrics as LlamacppMetricsNames;
  }
  const slots = v['llamacpp-slots'];
  if (slots !== undefined) {
    if (slots !== 'on' && slots !== 'off') throw new ConfigError(`--llamacpp-slots ${slots} is invalid: use on or off`);
    out.llamacppSlots = slots === 'on';
  }
  if (v.overrides !== undefined) out.overrides = parseOverrides(out.profile, v.overrides);
  return out;
}

/** --overrides: a JSON object of the profile's fields, each of its type (sim/profiles.ts checkSimOverrides). */
function parseOverrides(profile: string, text: string): SimProfileOverrides {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`--overrides must be a JSON object of simulator profile fields, e.g. --overrides '{"maxRunningRequests":256}'`);
  }
  return checkSimOverrides(profile, raw as Record<string, unknown>, '--overrides');
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
  const overrides: SimProfileOverrides = { ...args.overrides };
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

/**
 * `llm-speed-matrix sim …`: prints the URL and serves until SIGINT/SIGTERM; resolves once listening
 * (0), or at once after printing the usage for --help / -h (0). A usage mistake throws a ConfigError.
 */
export async function runSimCli(argv: readonly string[]): Promise<number> {
  if (parseSimArgs(argv, 'allow-help') === 'help') {
    process.stdout.write(`${SIM_USAGE}\n`);
    return 0;
  }
  const sim = await startSimCli(argv, (line) => process.stdout.write(line));
  const stop = (): void => {
    void sim.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return 0;
}
