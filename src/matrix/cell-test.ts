/**
 * Body of one generated cell test: run the cell (or record it Over capacity and skip), compute
 * its figures and status, store the result in task meta, then assert status and budgets.
 */
import type {} from './task-meta.js';
import type { TestContext } from 'vitest';
import { runCell } from '../load/cell.js';
import { usageDisagreement } from '../metrics/usage-check.js';
import { calibrationRecord } from '../prompts/calibrate.js';
import { escapeText } from '../pages/escape.js';
import { isUnreachable } from '../engines/http.js';
import { cellFailures, computeCellFigures, MATRIX_TTFT_FROM, streamEndings } from '../metrics/figures.js';
import { crossCheckCell } from '../metrics/crosscheck.js';
import type { ServerCrossCheck } from '../shapes/result.gen.js';
import { cellStatuses } from '../metrics/status.js';
import type { CellResult } from '../shapes/result.js';
import { evaluateCell } from '../thresholds/evaluate.js';
import { gateTimeoutMs, type PlannedCell } from './plan.js';
import type { RunContext } from './context.js';
import { progress } from './progress.js';
import { combineStatuses, medianFigures, repeatsOf } from './repeat.js';
import { baselineCellFailures } from '../compare/baseline.js';
import { computeGoodput, sumGoodput } from '../slo/goodput.js';
import { cellSeries } from '../metrics/series.js';
import { judgeCell } from '../slo/verdict.js';
import type { Goodput } from '../shapes/result.js';

/** The Over capacity result of a planned cell (not run): the numbers that decide it. */
export function overCapacityResult(cell: PlannedCell): CellResult {
  return {
    context: cell.context,
    contextLabel: cell.contextLabel,
    concurrency: cell.concurrency,
    status: 'over-capacity',
    statuses: ['over-capacity'],
    evidence: { capacity: cell.overCapacity! },
    finishedAt: new Date().toISOString(),
  };
}

/**
 * Measure one cell that fits (every repeat) into its result: figures, statuses and evidence, the
 * server's cross-check, goodput against the run's SLO. A cell that cannot start (the server stayed
 * unreachable, or its prompt cannot be sized) comes back as status not-run with the reason; an
 * aborted run throws. Shared by the matrix's cells and the capacity search's adaptive ones.
 */
export async function measureCell(run: RunContext, cell: PlannedCell, signal: AbortSignal): Promise<CellResult> {
  const { cfg, opened } = run;
  const say = (m: string) => progress(`${cell.key}: ${m}`);
  const notRun = (error: unknown): CellResult => ({
    context: cell.context,
    contextLabel: cell.contextLabel,
    concurrency: cell.concurrency,
    status: 'not-run',
    statuses: ['not-run'],
    evidence: {},
    notRunReason: (error as Error)?.message ?? String(error),
    finishedAt: new Date().toISOString(),
  });
  let prompt: Awaited<ReturnType<typeof run.prompts.rowPrompt>>;
  try {
    prompt = await run.prompts.rowPrompt(cell.context, cfg.matrix.maxOutputTokens);
  } catch (error) {
    if (signal.aborted) throw error;
    return notRun(error);
  }
  const prompts = run.prompts.forCell(prompt, cell.concurrency);
  // LLM_BENCH_REPEAT: measure the cell `repeat` times (each run starts with the drain barrier);
  // request numbers move on by 100,000 per repeat so no repeat resends an earlier prompt
  const repeats: Array<{ raw: Awaited<ReturnType<typeof runCell>>; figures: ReturnType<typeof computeCellFigures>; verdict: ReturnType<typeof cellStatuses> }> = [];
  const crossChecks: ServerCrossCheck[] = [];
  const goodputs: Goodput[] = [];
  for (let r = 0; r < cfg.repeat; r++) {
    if (cfg.repeat > 1) say(`repeat ${r + 1} of ${cfg.repeat}`);
    let raw: Awaited<ReturnType<typeof runCell>>;
    try {
      raw = await runCell(opened.session, {
        context: cell.context,
        concurrency: cell.concurrency,
        promptFor: (w, i) => prompts.prompt(w, i + r * 100_000),
        scoutPrompts: prompts.scoutPrompts(),
        windowMs: cfg.matrix.windowS * 1000,
        gateTimeoutMs: gateTimeoutMs(cfg.timeouts, cell),
        gateSettleMs: cfg.timeouts.gateSettleMs,
        drainTimeoutMs: cfg.timeouts.drainMs,
        metricsIntervalMs: cfg.metricsIntervalMs,
        signal,
        onPhase: say,
      });
    } catch (error) {
      // the server stayed unreachable through the retry budget: the cell could not start
      if (!signal.aborted && r === 0 && isUnreachable(error)) return notRun(error);
      throw error;
    }

    const figures = computeCellFigures({
      timelines: raw.timelines,
      windowStartMs: raw.windowStartMs,
      windowEndMs: raw.windowEndMs,
      metricsSamples: raw.samples,
      // the clock starts when the request is written to the socket: the client's own queueing is not the server's TTFT
      ttftFrom: MATRIX_TTFT_FROM,
      stallLimit: cfg.stallLimitMs ?? 'cell',
    });
    const verdict = cellStatuses({
      concurrency: cell.concurrency,
      figures,
      timelines: raw.timelines,
      failures: cellFailures(raw.timelines, raw.windowStartMs, raw.windowEndMs, figures.stallLimitMs),
      streamEndings: streamEndings(raw.timelines, raw.windowStartMs, raw.windowEndMs),
      samples: raw.samples,
      windowStartMs: raw.windowStartMs,
      windowEndMs: raw.windowEndMs,
      gateTimedOut: raw.gate.timedOut,
      gateWaitedMs: raw.gate.waitedMs,
      drainTimedOut: raw.drain.timedOut,
      drainWaitedMs: raw.drain.waitedMs,
      loopDelayMs: raw.loopDelayMs,
      loopDelayBoundMs: cfg.clientLimitedLoopDelayMs,
      ...(raw.clientCpu ? { clientCpuCores: raw.clientCpu.cores } : {}),
    });
    repeats.push({ raw, figures, verdict });
    if (cfg.slo) {
      goodputs.push(
        computeGoodput({
          timelines: raw.timelines,
          windowStartMs: raw.windowStartMs,
          windowEndMs: raw.windowEndMs,
          ttftFrom: MATRIX_TTFT_FROM,
          ...(figures.stallLimitMs !== undefined ? { stallLimitMs: figures.stallLimitMs } : {}),
          slo: cfg.slo,
        }),
      );
    }
    // the server's own counts and speeds beside the client's (flagged at > 10 % apart)
    const check = crossCheckCell({
      timelines: raw.timelines,
      windowStartMs: raw.windowStartMs,
      windowEndMs: raw.windowEndMs,
      samples: raw.samples,
      figures,
      serverTimings: raw.serverTimings,
      engine: opened.session.adapter.kind,
    });
    if (check) {
      crossChecks.push(check);
      for (const i of check.items.filter((x) => x.disagree)) {
        say(`⚠ server and client disagree on ${i.figure}: server ${i.server.toFixed(1)}, client ${i.client.toFixed(1)} (${i.source})`);
      }
    }
  }
  const figures = medianFigures(repeats.map((x) => x.figures));
  const verdict = combineStatuses(repeats.map((x) => x.verdict));
  // the client's worst event-loop delay over the repeats
  const raw = repeats.reduce((worst, x) => ((x.raw.loopDelayMs?.p99 ?? 0) > (worst.raw.loopDelayMs?.p99 ?? 0) ? x : worst)).raw;
  const last = repeats[repeats.length - 1]!.raw;
  // final usage that disagrees with the stream (the counts stay the stream's), over every repeat
  const usageDisagrees = usageDisagreement(repeats.flatMap((x) => x.raw.timelines));
  if (usageDisagrees) {
    say(`⚠ the server's usage.completion_tokens disagrees with the streamed tokens in ${usageDisagrees.requests} of ${usageDisagrees.of} requests (e.g. usage ${usageDisagrees.example.usage}, streamed ${usageDisagrees.example.counted}); counting the stream`);
  }
  return {
    context: cell.context,
    contextLabel: cell.contextLabel,
    concurrency: cell.concurrency,
    status: verdict.status,
    statuses: verdict.statuses,
    evidence: usageDisagrees ? { ...verdict.evidence, usageDisagrees } : verdict.evidence,
    figures,
    ...(goodputs.length > 0 ? { goodput: sumGoodput(goodputs) } : {}),
    ...(raw.loopDelayMs ? { clientEventLoopDelayMs: raw.loopDelayMs } : {}),
    // what the HTML report draws, from the last repeat
    series: cellSeries({ timelines: last.timelines, samples: last.samples, windowStartMs: last.windowStartMs, windowEndMs: last.windowEndMs }),
    ...(raw.clientCpu ? { clientCpu: raw.clientCpu } : {}),
    ...(prompt.promptTokens !== undefined ? { promptTokens: prompt.promptTokens } : {}),
    calibration: calibrationRecord(prompt),
    ...(repeats.length > 1 ? { repeats: repeatsOf(repeats.map((x) => x.figures)) } : {}),
    // a repeat whose numbers disagree is the one kept; else the last
    ...(crossChecks.length > 0 ? { serverCrossCheck: crossChecks.find((c) => c.disagree) ?? crossChecks[crossChecks.length - 1]! } : {}),
    connections: repeats[repeats.length - 1]!.raw.connections,
    finishedAt: new Date().toISOString(),
  };
}

export function createCellRunner(run: RunContext) {
  const { cfg, info } = run;
  return async function runCellTest(cell: PlannedCell, tc: TestContext): Promise<void> {
    if (cell.overCapacity) {
      const result = overCapacityResult(cell);
      const { requiredTokens, kvCapacityTokens } = cell.overCapacity;
      // a budgeted cell that no longer fits (a smaller KV cache, a longer max output) is a
      // regression, not a skip: its budget is checked like any other cell's
      const budget = run.thresholds.cells[cell.key];
      const overFailures = evaluateCell(cell.key, result, budget, run.thresholds.tolerances);
      if (budget !== undefined && overFailures.length > 0) {
        result.thresholdFailures = [
          `${cell.key} is Over capacity: ${cell.concurrency} × (${cell.context} + ${cfg.matrix.maxOutputTokens}) = ${requiredTokens.toLocaleString('en-US')} tokens > KV capacity ${kvCapacityTokens.toLocaleString('en-US')}, but its budget expects it to run`,
          ...overFailures,
        ];
      }
      if (cfg.slo) result.slo = judgeCell(result, cfg.slo);
      run.results.set(cell.key, result);
      tc.task.meta.speedMatrix = { kind: 'cell', cell: result, info };
      if (result.thresholdFailures && !run.updating) throw new Error(result.thresholdFailures.join('\n'));
      tc.skip(
        `Over capacity: ${cell.concurrency} × (${cell.context} + ${cfg.matrix.maxOutputTokens}) = ${requiredTokens.toLocaleString('en-US')} tokens > KV capacity ${kvCapacityTokens.toLocaleString('en-US')}`,
      );
      return;
    }
    const result = await measureCell(run, cell, tc.signal);
    if (result.status === 'not-run') {
      // stored with why, then failed
      run.results.set(cell.key, result);
      tc.task.meta.speedMatrix = { kind: 'cell', cell: result, info };
      throw new Error(`${cell.key} could not start: ${result.notRunReason}`);
    }
    finishCell(run, cell.key, result, tc);
  };
}

/**
 * A cell's verdicts, stored on the result and enforced: its threshold budget, the Client-limited
 * rule, failed requests (they fail unless the budget sets max.failedRequests or the run allows them),
 * no output tokens, and the baseline. Then the result goes to the reporter (task meta) and a failing
 * cell throws, except under `-u`. Used for measured cells and for cells taken from a resumed run.
 */
export function finishCell(run: RunContext, key: string, result: CellResult, tc: TestContext): void {
  const { cfg, info } = run;
  const failures: string[] = [];
  const budget = run.thresholds.cells[key];
  failures.push(...evaluateCell(key, result, budget, run.thresholds.tolerances));
  const figures = result.figures;
  if (result.status === 'client-limited' && !cfg.allowClientLimited) {
    const ev = result.evidence.clientLimited;
    failures.push(
      `${key} is Client-limited: the load generator's event-loop delay p99 was ${ev?.eventLoopDelayP99Ms.toFixed(1)} ms (bound ${ev?.boundMs} ms)` +
        `${ev?.cpuCores !== undefined ? ` and its CPU ${ev.cpuCores.toFixed(2)} cores (bound ${ev.cpuBoundCores})` : ''}, so its figures may be wrong; run fewer streams per process or set allowClientLimited`,
    );
  }
  if (result.status === 'stream-buffered' && !(run.thresholds.tolerances?.acceptStatuses ?? []).includes('stream-buffered')) {
    const b = result.evidence.streamBuffered;
    failures.push(
      `${key}: the stream was buffered on the way (${b ? `${Math.round(b.zeroGapShare * 100)} % of the gaps between a request's chunks under 0.5 ms, median burst ${b.burstTokens.median} tokens, largest ${b.burstTokens.max}` : 'bursts'}), ` +
        "so its TTFT and time between tokens are the proxy's, not the server's. Turn buffering off on the way (nginx: proxy_buffering off; no gzip on text/event-stream), " +
        'or accept the status in the threshold file (tolerances.acceptStatuses: ["stream-buffered"])',
    );
  }
  if (figures && figures.failedRequests > 0 && !cfg.allowErrors && budget?.max?.failedRequests === undefined) {
    const e = result.evidence.errors;
    const codes = e ? Object.entries(e.byCode).map(([code, n]) => `${n} ${code}`).join(', ') : '';
    failures.push(
      `${key} had ${figures.failedRequests} failed request${figures.failedRequests === 1 ? '' : 's'}${codes ? ` (${codes})` : ''}` +
        // the server's text is escaped here: failure lines reach the page and the job summary
        `${e?.firstMessage ? `; first: ${escapeText(e.firstMessage)}` : ''}. A cell with failed requests fails unless its threshold budget sets max.failedRequests or LLM_BENCH_ALLOW_ERRORS=1`,
    );
  }
  if (figures && figures.outputTokens === 0 && result.status !== 'client-limited') {
    failures.push(`${key} measured no output tokens in its window (${figures.failedRequests} failed requests)`);
  }
  result.thresholdFailures = failures;
  // the cell against the run's SLO (a kept cell is judged again: the SLO may have changed)
  if (cfg.slo) result.slo = judgeCell(result, cfg.slo);
  else delete result.slo;
  run.results.set(key, result);
  // LLM_BENCH_BASELINE: the same cell of the baseline run, within the regression tolerances
  const regressions = run.baseline ? baselineCellFailures(run.baseline, result) : [];
  // a kept (resumed) result may carry another run's baseline verdicts
  if (run.baseline) result.baselineFailures = regressions;
  else delete result.baselineFailures;
  tc.task.meta.speedMatrix = { kind: 'cell', cell: result, info };
  const all = [...failures, ...regressions];
  if (all.length > 0 && !run.updating) throw new Error(all.join('\n'));
}
