/**
 * Opening a run: reach the server (or start the embedded simulator), pick the engine adapter,
 * probe the server's facts, send the warm-up request, and describe the run for the page.
 * Everything here happens once per run, before the first test.
 */
import { loadLocalTokenizer } from '../tokenizer/local.js';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { threadsOverCoresNote, type ServerPlace } from '../load/thread-count.js';
import { packageInfo } from '../meta/package.js';
import type { ResolvedSuite } from '../config/resolve.js';
import { ConfigError, SpeedMatrixError } from '../errors.js';
import type { EngineAdapter, HttpTarget, ServerFacts } from '../shapes/engine.js';
import { detectEngine, getAdapter } from '../engines/detect.js';
import { apiKeyFix, NOT_READY_FIX, notReady, refusesKey, retryWhileUnreachable } from '../engines/http.js';
import { monoMs } from '../clock.js';
import { ProbeError, probeReadiness, unlistedModelWarning } from '../engines/openai.js';
import { checkSimOverrides, startSim, type SimHandle, type SimProfileOverrides } from '../sim/index.js';
import { scrapeMetrics, type LoadSession } from '../load/session.js';
import { ConnectionPolicy } from '../client/connections.js';
import { runSingleRequest, WARMUP_CLOSE_WATCH_MS } from '../load/prefill.js';
import { confirmDetection } from '../load/confirm.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import { DEFAULTS } from '../config/defaults.js';
import { progress } from './progress.js';
import type { HardwareInfo, RunInfo } from '../shapes/result.js';
import { detectLocalHardware, isLocalTarget, mergeHardware, type DetectedHardware } from '../meta/hardware.js';
import { listeningProcess } from '../meta/local-process.js';
import { launchCommandFrom, redactFacts } from '../meta/launch.js';
import { REDACTED, redactValues } from '../redact.js';
import type { MatrixPlan } from './plan.js';
import { followBaseRedirects } from '../engines/redirect.js';

/** The tool's name and version, read once from the package's own package.json (the one place they are written). */
export const TOOL: { readonly name: string; readonly version: string } = packageInfo();

const WARMUP_ATTEMPTS = 3;

export interface OpenedRun {
  session: LoadSession;
  sim?: SimHandle;
  /** how the adapter was chosen, for the page and for unsure detection */
  detection: string;
  /** set when detection was unsure or fell back to the generic adapter (also written to stderr) */
  detectionNote?: string;
  /** this machine's hardware, detected only when the server runs on it (not for the simulator) */
  hardware?: DetectedHardware;
  close(): Promise<void>;
}

/**
 * How the prefill rows relate to the decode rows: a prefill context that is also a decode row is that
 * row's cache warm-up ("measured during decode warm-up"); one that is not (128K on the default page)
 * is a separate cold request.
 */
export function prefillModeOf(prefill: readonly number[], contexts: readonly number[]): RunInfo['run']['prefillMode'] {
  const warming = prefill.filter((c) => contexts.includes(c)).length;
  if (warming === prefill.length) return 'measured-during-decode-warm-up';
  return warming === 0 ? 'separate' : 'mixed';
}

/**
 * A progress line while setup waits for a server that does not answer (a restart), or says it is
 * not ready yet (loading its model). A probe's error is shown without its fix, which the run
 * prints once if it gives up; a not-ready one says so itself ("the server is not ready: …").
 */
function unreachableProgress(error: unknown, waitMs: number): void {
  const message = error instanceof ProbeError ? error.what : (error as Error).message;
  const what = error instanceof ProbeError && error.code === 'not-ready' ? message : `the server is not answering (${message})`;
  progress(`${what}; trying again in ${(waitMs / 1000).toFixed(1)} s`);
}

/** The TCP port of a URL, its scheme's default where it names none. */
function portOf(url: string): number {
  const u = new URL(url);
  return u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}

/** Target URL as shown on the page: credentials and query removed. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '<invalid url>';
  }
}

/** The simulator's overrides as the result records them: its API key (wire.apiKey) and the run's never written. */
function redactedOverrides<T>(overrides: T, apiKey: string | undefined): T {
  const wire = (overrides as { wire?: { apiKey?: unknown } } | undefined)?.wire;
  const simKey = typeof wire?.apiKey === 'string' ? wire.apiKey : undefined;
  const out = JSON.parse(redactValues(JSON.stringify(overrides), [apiKey, simKey])) as T & { wire?: { apiKey?: unknown } };
  if (simKey !== undefined && out.wire) out.wire.apiKey = REDACTED;
  return out;
}

/**
 * LLM_BENCH_SIM_OVERRIDES checked against the profile: every key must be a profile field of the
 * same type, and the resulting profile must be valid. Errors name the variable and the fix.
 */
export function simOverridesOf(cfg: ResolvedSuite): { overrides?: SimProfileOverrides } {
  const raw = cfg.simOverrides;
  if (raw === undefined) return {};
  return { overrides: checkSimOverrides(cfg.simProfile, raw, 'LLM_BENCH_SIM_OVERRIDES') };
}

/** Where the run's server is, which decides the cores left to client threads (load/thread-count.ts): no URL is the embedded simulator. */
export function serverPlace(cfg: ResolvedSuite): ServerPlace {
  return cfg.target.url === undefined ? 'embedded' : isLocalTarget(cfg.target.url) ? 'local' : 'remote';
}

export async function openRun(cfg: ResolvedSuite): Promise<OpenedRun> {
  let sim: SimHandle | undefined;
  let baseUrl = cfg.target.url;
  if (cfg.target.urlNote !== undefined) process.stderr.write(`[speed-matrix] target URL: ${cfg.target.urlNote}\n`);
  if (cfg.allowClientLimitedWhy !== undefined) {
    // the allowance is about the cores: a rate cell the in-flight ceiling (a setting) held back still fails (judge-rate.ts)
    const ceiling = cfg.rates ? '; a rate cell the in-flight ceiling held back still fails, as that is a setting, not the cores' : '';
    process.stderr.write(`[speed-matrix] ${cfg.allowClientLimitedWhy}${ceiling}\n`);
  }
  if (cfg.unusedRateSettingsNote !== undefined) process.stderr.write(`[speed-matrix] ${cfg.unusedRateSettingsNote}\n`);
  if (cfg.unusedContextsNote !== undefined) process.stderr.write(`[speed-matrix] ${cfg.unusedContextsNote}\n`);
  const overCores = threadsOverCoresNote(cfg.clientThreads, availableParallelism(), serverPlace(cfg));
  if (overCores !== undefined) process.stderr.write(`[speed-matrix] ${overCores}\n`);
  if (baseUrl === undefined) {
    sim = await startSim({ profile: cfg.simProfile, thread: true, ...simOverridesOf(cfg) });
    baseUrl = sim.url;
  } else {
    // a gateway that redirects the server's paths: the run measures where they lead, said once
    const redirected = await followBaseRedirects({ baseUrl, ...(cfg.target.apiKey ? { apiKey: cfg.target.apiKey } : {}) });
    if (redirected.hops.length > 0) {
      process.stderr.write(`[speed-matrix] ${redirected.hops.join('; ')}: measuring ${displayUrl(redirected.baseUrl)} (set LLM_BENCH_URL there to skip the hop)\n`);
      baseUrl = redirected.baseUrl;
    }
  }
  const target: HttpTarget = { baseUrl, ...(cfg.target.apiKey ? { apiKey: cfg.target.apiKey } : {}) };
  const runId = `lsm${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  try {
    let adapter: EngineAdapter;
    let detection: string;
    let detectionNote: string | undefined;
    // a server still starting answers its health check 503 before anything else is asked of it;
    // one that still does after the wait goes on (a gateway may route /health elsewhere): the
    // probes and the warm-up that follow decide
    if (!sim) {
      await retryWhileUnreachable(() => probeReadiness(target), { budgetMs: cfg.timeouts.unreachableRetryMs, onRetry: unreachableProgress }).catch((error: unknown) => {
        if (!(error instanceof ProbeError && error.code === 'not-ready')) throw error;
        progress(`${error.what} after ${(cfg.timeouts.unreachableRetryMs / 1000).toFixed(0)} s; going on: the probes and the warm-up decide`);
      });
    }
    if (cfg.target.engine) {
      adapter = getAdapter(cfg.target.engine);
      detection = `engine set in config: ${cfg.target.engine}`;
    } else {
      const detected = await retryWhileUnreachable(() => detectEngine(target), { budgetMs: cfg.timeouts.unreachableRetryMs, onRetry: unreachableProgress });
      // a server may answer several APIs: one short streamed request confirms the pick (else the
      // generic adapter); not for the simulator started here, whose personality is known
      const found = sim ? detected : await confirmDetection(target, detected, {
        ...(cfg.target.model ? { model: cfg.target.model } : {}),
        endpoint: cfg.target.endpoint,
        timeouts: { headersMs: cfg.timeouts.headersMs, stallMs: cfg.timeouts.stallMs },
        requestId: `${runId}-confirm`,
      });
      adapter = getAdapter(found.kind);
      detection = found.evidence;
      detectionNote = found.note;
      if (detectionNote) process.stderr.write(`[speed-matrix] engine detection: ${detectionNote}\n`);
    }
    // the server's machine is this one: read its GPUs, CPU, RAM and OS (never for the simulator)
    const hardware = !sim && isLocalTarget(baseUrl) ? await detectLocalHardware() : undefined;
    let probed = await retryWhileUnreachable(() => adapter.probe(target, cfg.target.model), {
      budgetMs: cfg.timeouts.unreachableRetryMs,
      onRetry: unreachableProgress,
    });
    // a server on this machine: its command line may settle what its endpoints leave open
    if (adapter.factsFromCommandLine && !sim && isLocalTarget(baseUrl)) {
      const port = portOf(baseUrl);
      probed = (await adapter.factsFromCommandLine((program, env) => listeningProcess(port, { program, env }), probed)) ?? probed;
    }
    const unlisted = unlistedModelWarning(probed.model);
    if (unlisted !== undefined) process.stderr.write(`[speed-matrix] ${unlisted}\n`);
    const facts: ServerFacts = {
      ...probed,
      ...(cfg.target.kvCapacityTokens ? { kvCapacityTokens: { value: cfg.target.kvCapacityTokens, source: 'config (kvCapacityTokens)' } } : {}),
      ...(cfg.target.maxRunningRequests
        ? { maxRunningRequests: { value: cfg.target.maxRunningRequests, source: 'config (maxRunningRequests)' } }
        : {}),
    };
    const session: LoadSession = {
      target,
      adapter,
      facts,
      model: facts.model.value,
      endpoint: cfg.target.endpoint,
      maxOutputTokens: cfg.matrix.maxOutputTokens,
      timeouts: { headersMs: cfg.timeouts.headersMs, stallMs: cfg.timeouts.stallMs, unreachableRetryMs: cfg.timeouts.unreachableRetryMs },
      runId,
      connections: new ConnectionPolicy(),
      hasMetrics: false,
      ...(cfg.target.tokenizer !== undefined ? { localTokenizer: await loadLocalTokenizer(cfg.target.tokenizer) } : {}),
    };
    // after the warm-up: a server may list some series only once it has served a request
    await warmUp(session, cfg, displayUrl(baseUrl));
    session.hasMetrics = metricsWithCounts(await scrapeMetrics(session));
    return {
      session,
      sim,
      detection,
      ...(detectionNote ? { detectionNote } : {}),
      ...(hardware ? { hardware } : {}),
      close: async () => {
        await sim?.close();
      },
    };
  } catch (err) {
    await sim?.close();
    throw err;
  }
}

/**
 * Warm-up (METHOD.md 3): one short request, not recorded. A server that cannot answer it is a setup error.
 * Up to 3 tries: one failed request of a server that fails some requests is data, not a setup error.
 * An answer of 502, 503 or 504 uses up no try while LLM_BENCH_RETRY_S lasts: a server may list its
 * models before it can generate, and the run waits for it as for one that does not answer yet.
 * It also shows whether the server closes connections after a streamed response (llama.cpp does).
 * A stream that stops after its first token fails as a stall within warmupStallMs, not 60 s.
 */
async function warmUp(session: LoadSession, cfg: ResolvedSuite, url: string): Promise<void> {
  const warmOptions = { watchCloseMs: WARMUP_CLOSE_WATCH_MS, stallAfterFirstTokenMs: cfg.stallLimitMs ?? DEFAULTS.warmupStallMs };
  // one budget for all tries' waits on a server that is not ready
  const notReadyUntilMs = monoMs() + cfg.timeouts.unreachableRetryMs;
  let sent = 0;
  let notReadySinceMs: number | undefined;
  /** one request; a 502/503/504 is thrown as not-ready, for retryWhileUnreachable to wait on */
  const send = async (): Promise<RequestTimeline> => {
    const warm = await runSingleRequest(session, `${session.runId}-warmup${sent > 0 ? sent : ''}`, 'Say hello.', 8, warmOptions);
    sent++;
    // not ready (502/503/504), or rate-limited (429): waited on, within the same budget
    if (warm.end?.kind === 'error' && (notReady(warm.end.httpStatus) || warm.end.code === 'rate-limited')) throw new NotReadyAnswer(warm);
    return warm;
  };
  let end: Extract<RequestTimeline['end'], { kind: 'error' }> | undefined;
  for (let attempt = 1; attempt <= WARMUP_ATTEMPTS; attempt++) {
    progress(`warm-up request ${attempt} of ${WARMUP_ATTEMPTS} to ${url}`);
    const warm = await retryWhileUnreachable(send, {
      budgetMs: Math.max(0, notReadyUntilMs - monoMs()),
      onRetry: (error, ms) => {
        notReadySinceMs ??= monoMs();
        const answered = (error as NotReadyAnswer).timeline.end;
        const limited = answered?.kind === 'error' && answered.code === 'rate-limited';
        progress(`${limited ? 'the server rate-limited the run' : 'the server is not ready'}: warm-up request ${attempt} answered ${(error as NotReadyAnswer).message}; trying again in ${(ms / 1000).toFixed(1)} s`);
      },
    }).catch((error: unknown) => {
      if (error instanceof NotReadyAnswer) return error.timeline;
      throw error;
    });
    if (warm.end?.kind !== 'error') return;
    end = warm.end;
    // a refused key is refused again: no second try
    const again = attempt < WARMUP_ATTEMPTS && !refusesKey(end.httpStatus);
    // its message is redacted of the key already (session.ts sendRequest)
    progress(`warm-up request ${attempt} failed (${end.code}: ${end.message})${again ? '; trying again' : ''}`);
    if (!again) break;
  }
  if (end === undefined) return;
  if (refusesKey(end.httpStatus)) {
    throw new ConfigError(`the warm-up request to ${url} was refused (${end.message}). ${apiKeyFix(session.target.apiKey !== undefined, end.httpStatus!)}`);
  }
  const advice =
    end.code === 'stall'
      ? 'the server stalled mid-stream: check its logs (LLM_BENCH_STALL_S sets the stall limit)'
      : end.code === 'rate-limited'
        ? `the server rate-limited the run (HTTP 429${notReadySinceMs === undefined ? '' : ` for ${((monoMs() - notReadySinceMs) / 1000).toFixed(1)} s`}): raise its rate limit for this client (a benchmark sends many requests at once), or LLM_BENCH_RETRY_S to wait longer`
        : notReady(end.httpStatus)
        ? `the server is not ready (HTTP ${end.httpStatus}${notReadySinceMs === undefined ? '' : ` for ${((monoMs() - notReadySinceMs) / 1000).toFixed(1)} s`}). ${NOT_READY_FIX}`
        : 'check the URL, model and API key';
  throw new ConfigError(`the warm-up request to ${url} failed (${end.code}: ${end.message}); ${advice}`);
}

/**
 * Whether the server's metrics carry what the drain barrier and the queue rule wait on: a running
 * or a waiting count. Metrics that answer without either (a gateway's, an engine fork's renamed
 * series) are said once, and the run reads the client's own signals: it used to wait the drain
 * barrier's 120 s before every cell, saying the scrapes failed (issue 60).
 */
function metricsWithCounts(sample: Awaited<ReturnType<typeof scrapeMetrics>>): boolean {
  if (sample === undefined) return false;
  if (sample.running !== undefined || sample.waiting !== undefined) return true;
  process.stderr.write(
    "[speed-matrix] the server's metrics answered without a running or a waiting count (renamed series, or another server's metrics): the drain barrier and the queue rule read the client's own requests in flight instead; the other series it has (KV cache use, counters) are still sampled\n",
  );
  return false;
}

/**
 * A warm-up request answered 502, 503 or 504, or 429: `not-ready`, which retryWhileUnreachable
 * waits on (a 429's Retry-After at least); its message is the answer's.
 */
class NotReadyAnswer extends SpeedMatrixError<'not-ready'> {
  readonly retryAfterMs?: number;
  constructor(readonly timeline: RequestTimeline) {
    super('not-ready', timeline.end?.kind === 'error' ? timeline.end.message : 'not ready');
    if (timeline.end?.kind === 'error' && timeline.end.retryAfterMs !== undefined) this.retryAfterMs = timeline.end.retryAfterMs;
  }
}

/** The hardware each simulator profile imitates (from its reference page), shown as simulated. */
const SIMULATED_HARDWARE: Record<string, Pick<HardwareInfo, 'gpu' | 'gpuCount' | 'vram'>> = {
  'sglang-h200': { gpu: 'H200 NVL 141GB', gpuCount: 1, vram: '141 GB' },
  'vllm-arc-b65x4': { gpu: 'Intel Arc Pro B65 32GB', gpuCount: 4, vram: '128 GB (4 × 32 GB)' },
};

export function describeRun(cfg: ResolvedSuite, opened: OpenedRun, plan: MatrixPlan): RunInfo {
  const { facts } = opened.session;
  const model = facts.model.value;
  // from the config, else from the server's own arguments; secrets (and the API key) redacted
  const launchCommand = launchCommandFrom(cfg.target.launchCommand, facts, [cfg.target.apiKey]);
  const hw: HardwareInfo = opened.sim
    ? {
        type: 'Simulated server (embedded, no GPU)',
        ...SIMULATED_HARDWARE[cfg.simProfile],
        source: `simulated (profile ${cfg.simProfile})`,
      }
    : mergeHardware({ config: cfg.target.hardware, detected: opened.hardware });
  const where = hw.gpu ? `${hw.gpu}${hw.gpuCount && hw.gpuCount > 1 ? ` ×${hw.gpuCount}` : ''}` : displayUrl(opened.session.target.baseUrl);
  return {
    title: `${model} on ${where}${opened.sim ? ' (simulated)' : ''}`,
    simulated: opened.sim !== undefined,
    ...(opened.sim ? { simProfile: cfg.simProfile } : {}),
    ...(opened.sim && cfg.simOverrides ? { simOverrides: redactedOverrides(cfg.simOverrides, cfg.target.apiKey) } : {}),
    targetUrl: displayUrl(opened.session.target.baseUrl),
    startedAt: new Date().toISOString(),
    hardware: hw,
    engine: {
      engine: facts.engine.value,
      ...(facts.version ? { version: facts.version.value } : {}),
      ...(cfg.target.engineInfo ?? {}),
      detectedBy: opened.detection,
      ...(opened.detectionNote ? { detectionNote: opened.detectionNote } : {}),
    },
    run: {
      servedModel: model,
      ...(cfg.target.revision ? { revision: cfg.target.revision } : {}),
      tool: { ...TOOL },
      decodeTest: 'fixed-duration',
      prefillMode: prefillModeOf(cfg.matrix.prefill, cfg.matrix.contexts),
      windowS: cfg.matrix.windowS,
      maxOutputTokens: cfg.matrix.maxOutputTokens,
      endpoint: cfg.target.endpoint,
      ttftStart: 'request-written',
      contexts: cfg.matrix.contexts,
      concurrency: cfg.matrix.concurrency,
      prefillContexts: cfg.matrix.prefill,
      ...(cfg.repeat > 1 ? { repeat: cfg.repeat } : {}),
      ...(cfg.slo ? { slo: cfg.slo } : {}),
      ...(cfg.columns.length > 0 ? { columns: cfg.columns } : {}),
      ...(cfg.percentiles ? { percentiles: cfg.percentiles } : {}),
      ...(cfg.rates ? { rates: cfg.rates } : {}),
      // TGI, Ollama: no ignore_eos, so requests may stop early; the page says what was counted
      ...(opened.session.adapter.forcesLength === false ? { outputLengthForced: false } : {}),
    },
    server: redactFacts(facts, [cfg.target.apiKey]),
    ...(launchCommand ? { launchCommand } : {}),
    plannedCells: plan.cells.map((c) => c.key),
    ...(plan.cells.some((c) => c.overCapacity) ? { plannedOverCapacity: plan.cells.filter((c) => c.overCapacity).map((c) => c.key) } : {}),
    plannedPrefill: plan.prefill.map((p) => p.key),
    thresholdsPath: cfg.thresholdsPath,
    ...(cfg.baselinePath !== undefined ? { baselinePath: cfg.baselinePath } : {}),
  } as RunInfo;
}

