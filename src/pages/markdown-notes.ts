/**
 * The Markdown page's notes under All measurements, each only when a cell calls for it: why
 * requests failed, resent requests and closing connections, usage that disagrees, stream endings,
 * where the running figure came from, buffered streams, stalls inside streams, cells the client
 * could not time, figures not computed.
 */
import { formatCount, formatMs, formatNumber, formatRate } from '../text/format.js';
import { cellKey } from '../shapes/labels.js';
import type { CellResult } from '../shapes/result.js';
import { escapeText } from '../text/escape.js';
import { clientLimitedAdvice, clientSelfCheckText } from '../judge/judge-cell.js';
import { longGapLines, streamEndingsText } from './view.js';
import { appendAll } from '../extent.js';

/**
 * A note on the cells `pick` finds something in: its heading, then one line per such cell
 * (`- 8K/16: ` and `text` of what was found), then a blank line; none when no cell has it.
 */
function cellListNote<T>(cells: readonly CellResult[], pick: (c: CellResult) => T | undefined, heading: string, text: (found: T) => string): string[] {
  const lines: string[] = [];
  for (const c of cells) {
    const found = pick(c);
    if (found !== undefined) lines.push(`- ${cellKey(c.context, c.concurrency)}: ${text(found)}`);
  }
  return lines.length === 0 ? [] : [heading, '', ...lines, ''];
}

/** Why requests failed, per Errors cell: the count by code and the first message (a server's text, escaped). */
export function errorNotes(cells: readonly CellResult[]): string[] {
  return cellListNote(cells, (c) => (c.evidence.errors && c.evidence.errors.count > 0 ? c.evidence.errors : undefined), 'Failed requests, by cause:', (e) => {
    const codes = Object.entries(e.byCode)
      .map(([code, n]) => `${formatCount(n)} ${code}`)
      .join(', ');
    const first = e.firstMessage ? `; first: ${escapeText(e.firstMessage.length > 300 ? `${e.firstMessage.slice(0, 300)}…` : e.firstMessage)}` : '';
    return `${formatCount(e.count)} failed (${codes || 'no code'})${first}`;
  });
}

/** Cells whose server usage disagreed with the streamed tokens (evidence.usageDisagrees). */
export function usageNotes(cells: readonly CellResult[]): string[] {
  return cellListNote(cells, (c) => c.evidence.usageDisagrees, 'Server usage that disagrees with the streamed tokens (by more than max(2, 2 %)); the counts come from the stream:', (u) => {
    const constant = u.constant ? ', the same usage whatever the length' : '';
    return `${formatCount(u.requests)} of ${formatCount(u.of)} requests (e.g. usage ${formatCount(u.example.usage)}, streamed ${formatCount(u.example.counted)}${constant})`;
  });
}

/** Cells whose window was shorter than their median TTFT (evidence.windowShorterThanTtft). */
export function shortWindowNotes(cells: readonly CellResult[]): string[] {
  return cellListNote(
    cells,
    (c) => c.evidence.windowShorterThanTtft,
    'Windows shorter than the wait for a first token: these cells held mostly waiting, so their TTFT rests on the few first tokens inside the window and their total tok/s on streams that started before it, not the steady state. Lengthen the window (`LLM_BENCH_DURATION_S`) past the TTFT:',
    (w) => `median TTFT ${formatMs(w.ttftMedianMs)} from ${formatCount(w.ttftSamples)} first token${w.ttftSamples === 1 ? '' : 's'}, window ${formatNumber(w.windowS, 1)} s`,
  );
}

/** Cells whose server streamed past max_tokens (evidence.maxTokensIgnored). */
export function maxTokensNotes(cells: readonly CellResult[]): string[] {
  return cellListNote(
    cells,
    (c) => c.evidence.maxTokensIgnored,
    'The server ignored max_tokens: these requests streamed past the cap the run asked for. Every token is counted as streamed, but the output lengths, and the end-to-end latencies and request rates that rest on them, are not those of the max output above:',
    (m) => `${formatCount(m.requests)} of ${formatCount(m.of)} requests (e.g. ${formatCount(m.example.tokens)} tokens for ${formatCount(m.example.asked)} asked)`,
  );
}

/** Cells whose metric samples were set aside (evidence.metricSamplesSetAside, metrics/server-load.ts screenSamples). */
export function samplesSetAsideNotes(cells: readonly CellResult[]): string[] {
  return cellListNote(
    cells,
    (c) => c.evidence.metricSamplesSetAside,
    "Metric samples that could not be taken, left out of Average active requests and of the Requests-queued rule (the server's figures are over the rest; where none was left, the client's own timelines decide):",
    (m) => {
      const why = [
        m.late > 0 ? `${formatCount(m.late)} came back late (over ${formatMs(m.lateOverMs)}: the scrape waited on a loaded server or client)` : '',
        m.zeroWhileStreaming > 0 ? `${formatCount(m.zeroWhileStreaming)} read 0 running while a stream was receiving tokens through the scrape` : '',
      ].filter((x) => x !== '');
      return `${formatCount(m.late + m.zeroWhileStreaming)} of ${formatCount(m.of)}: ${why.join('; ')}`;
    },
  );
}

/**
 * Streams that ended otherwise than by a complete `data: [DONE]` event, per cell (evidence
 * streamEndings): read as completed requests, so the page says how many and how.
 */
export function streamEndingNotes(cells: readonly CellResult[]): string[] {
  const seen = cells.filter((c) => c.evidence.streamEndings && streamEndingsText(c.evidence.streamEndings) !== '');
  if (seen.length === 0) return [];
  const list = seen.map((c) => `${cellKey(c.context, c.concurrency)}: ${streamEndingsText(c.evidence.streamEndings!)}`).join('; ');
  return [
    `Stream endings (${list}): the server closed the connection after the chunk with the finish reason without sending \`data: [DONE]\`, or sent \`data: [DONE]\` with no blank line after it before closing. Both were read as completed requests, as curl and most clients read them; a close before any finish reason, or a broken connection, is still a failure.`,
    '',
  ];
}

type RunningSource = NonNullable<NonNullable<CellResult['figures']>['runningFrom']>;

/** How each source of a cell's running figure reads on the page (figures.runningFrom). */
export const RUNNING_SOURCE_TEXT: Readonly<Record<RunningSource, string>> = {
  'decode-counters': "the server's decode counters (llama.cpp `n_decode_total` × `n_busy_slots_per_decode`)",
  samples: "the server's running-requests metric, sampled",
  slots: "the server's busy slots (llama.cpp `GET /slots`), sampled; for Requests queued a sample with a slot idle counts what the client had in flight, up to the slots (llama.cpp queues a request only when every slot is busy), and for Average active requests a sample taken with more requests in flight than slots counts every slot (llama.cpp gives a freed slot a waiting request on its next turn, so an idle slot there is a hand-over, where a scrape that waited for an HTTP thread is served)",
  client: "client-side timelines: the server exposes no running or waiting figure, or none that could be taken, so a request counts as waiting from its send to its first token and as running from its first to its last token, except a silence longer than 8 × its usual gap between chunks while other streams streamed, which counts as waiting (a stream waiting its turn)",
};

/**
 * Where the cells' running figures came from (the figure Requests queued is judged on), one line
 * per source with its cells, and for client-side Requests queued cells the client's numbers.
 * Nothing when every measured cell used the server's running-requests metric.
 */
export function runningSourceNotes(cells: readonly CellResult[]): string[] {
  const measured = cells.filter((c) => c.figures?.runningFrom !== undefined);
  if (measured.length === 0 || measured.every((c) => c.figures!.runningFrom === 'samples')) return [];
  const bySource = new Map<RunningSource, string[]>();
  for (const c of measured) {
    const from = c.figures!.runningFrom!;
    bySource.set(from, [...(bySource.get(from) ?? []), cellKey(c.context, c.concurrency)]);
  }
  const out = ['Running requests (what Requests queued is judged on) came from:', ''];
  for (const [from, keys] of bySource) out.push(`- ${RUNNING_SOURCE_TEXT[from]}: ${keys.join(', ')}`);
  out.push('');
  const clientQueued = cells.filter((c) => c.evidence.queued?.source === 'client');
  if (clientQueued.length > 0) {
    const line = (c: CellResult): string => {
      const q = c.evidence.queued!;
      return `- ${cellKey(c.context, c.concurrency)}: at most ${formatCount(q.peakRunning)} of ${formatCount(q.concurrency)} ran at once, held there with requests waiting ${formatNumber((q.heldAtPeakShare ?? 0) * 100, 0)} % of the window (mean running ${formatRate(q.meanRunning)}, waiting ${formatRate(q.meanWaiting)})`;
    };
    appendAll(out, ['Requests queued (client-side): the server never ran all requests at once and held its peak while others waited:', '', ...clientQueued.map(line), '']);
  }
  return out;
}

/** Cells whose streams arrived bunched (evidence streamBuffered), with the burst evidence. */
export function bufferedNotes(cells: readonly CellResult[]): string[] {
  return cellListNote(
    cells,
    (c) => c.evidence.streamBuffered,
    "Stream buffered on the way: the tokens arrived in bursts no engine produces (each of a request's chunks comes from its own decode step), so something between the server and the load generator held them, and the TTFT and time between tokens shown are its, not the server's:",
    (b) =>
      `${Math.round(b.zeroGapShare * 100)} % of ${formatCount(b.gaps)} gaps between a request's chunks under 0.5 ms or a quarter of its own rhythm; ` +
      `tokens per burst median ${formatCount(b.burstTokens.median)}, p90 ${formatCount(b.burstTokens.p90)}, largest ${formatCount(b.burstTokens.max)} ` +
      `(${formatCount(b.oneBurstRequests)} of ${formatCount(b.requests)} requests in one burst)`,
  );
}

/** Cells with a long stall inside a stream (view.ts longGapLines), as a list. */
export function longGapNotes(cells: readonly CellResult[]): string[] {
  const [head, ...lines] = longGapLines(cells);
  if (head === undefined) return [];
  return [escapeText(head), '', ...lines.map((l) => `- ${escapeText(l)}`), ''];
}

/**
 * Cells the load generator could not time (Client-limited), each with its self-check's figures
 * against their bounds and what to do (the words of its failure line, judge/judge-cell.ts): a page
 * read without the test output still says why.
 */
export function clientLimitedNotes(cells: readonly CellResult[]): string[] {
  const flagged = cells.filter((c) => c.statuses.includes('client-limited'));
  if (flagged.length === 0) return [];
  const line = (c: CellResult): string => {
    const e = c.evidence.clientLimited;
    // a result written without the figures (an older file, or one edited) still lists the cell
    if (!e) return `- ${cellKey(c.context, c.concurrency)}: marked by the load generator; its self-check's figures are not in this result.`;
    return `- ${cellKey(c.context, c.concurrency)}: ${escapeText(clientSelfCheckText(e))}. ${escapeText(capitalized(clientLimitedAdvice(e, c.concurrency)))}.`;
  };
  return [
    "Client-limited: the load generator could not time these cells' tokens to within its bound, so their figures may be partly the client's:",
    '',
    ...flagged.map(line),
    '',
  ];
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Figures a measured cell could not compute, with the reason (never a bare dash without one). */
export function notComputedNotes(cells: readonly CellResult[]): string[] {
  const lines: string[] = [];
  for (const c of cells) {
    const n = c.figures?.notComputed;
    if (!n) continue;
    if (n.timeBetweenTokensMs) lines.push(`- ${cellKey(c.context, c.concurrency)}: time between tokens and per-request tok/s: ${n.timeBetweenTokensMs}`);
    if (n.ttftMs) lines.push(`- ${cellKey(c.context, c.concurrency)}: TTFT: ${n.ttftMs}`);
  }
  return lines.length === 0 ? [] : ['Figures shown as — could not be computed:', '', ...lines, ''];
}

/** What the load's connections showed: requests resent after a stale keep-alive connection, a server that closes after each response. */
export function connectionNotes(cells: readonly CellResult[]): string[] {
  const out: string[] = [];
  const resent = cells.filter((c) => c.evidence.connectionRetries);
  if (resent.length > 0) {
    const list = resent.map((c) => `${cellKey(c.context, c.concurrency)}: ${formatCount(c.evidence.connectionRetries!.count)}`).join(', ');
    const why = resent.find((c) => c.evidence.connectionRetries?.firstReason)?.evidence.connectionRetries?.firstReason;
    out.push(
      `Resent (${list}): requests whose send on a reused keep-alive connection failed before any answer, because the server had closed it${why ? ` (${escapeText(why)})` : ''}; each was sent once more on a fresh connection. They are not failures, and their TTFT starts at the resend.`,
      '',
    );
  }
  const closing = cells.find((c) => c.connections?.serverClosesAfterResponse);
  if (closing) {
    const c = closing.connections!;
    out.push(
      `Connections: the server closes the connection after each streamed response although it offers keep-alive, so requests said \`Connection: close\` and each worker's next connection was opened as its stream ended (${cellKey(closing.context, closing.concurrency)}: ${formatCount(c.opened)} connections for ${formatCount(c.requests)} requests${c.preparedUnused ? `, ${formatCount(c.preparedUnused)} of them opened for a next request that the window's end left unsent` : ''}).`,
      '',
    );
  }
  return out;
}
