/**
 * `POST /v1/completions` and `POST /v1/chat/completions`, the same for every personality:
 * admission (the personality's limit), the request's faults (X-Sim-Fault or the profile's draws),
 * its truth record, the sink that writes the stream (completion.ts) and the engine request.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { monoMs } from '../clock.js';
import { mulberry32 } from '../random.js';
import { CompletionSink } from './completion.js';
import type { EngineRequest } from './engine-model.js';
import { drawFaults, parseFaultHeader, requestSeed, type FaultPlan } from './faults.js';
import { TGI_DEFAULT_MAX_CONCURRENT_REQUESTS } from './profiles.js';
import { buildEngineRequest, parseCompletion, RequestError, type EndpointKind } from './request-body.js';
import type { Call, Handler, SimContext } from './route-table.js';
import { TruthRecord } from './truth.js';

/** The handler of one completion endpoint. */
export function completionRoute(ctx: SimContext, kind: EndpointKind): Handler {
  return (call) => handleCompletion(ctx, kind, call);
}

/**
 * TGI: 429 beyond --max-concurrent-requests in flight; Ollama / SGLang: 503 when the queue is
 * full. Answers and resolves false when the request is refused.
 */
function admit(ctx: SimContext, res: ServerResponse): boolean {
  const { profile, engine, totals } = ctx;
  const limit = profile.admissionLimit ?? (profile.personality === 'tgi' ? TGI_DEFAULT_MAX_CONCURRENT_REQUESTS : undefined);
  if (limit === undefined) return true;
  if (profile.personality === 'tgi' && ctx.inFlight >= limit) {
    totals.requestsFailed++;
    ctx.sendError(res, 429, 'Model is overloaded', 'overloaded');
    return false;
  }
  if ((profile.personality === 'ollama' || profile.personality === 'sglang') && engine.waitingCount >= limit) {
    totals.requestsFailed++;
    const msg = profile.personality === 'ollama' ? 'server busy, please try again.  maximum pending requests exceeded' : 'The request queue is full.';
    ctx.sendError(res, 503, msg, 'ServiceUnavailableError');
    return false;
  }
  return true;
}

/** The request's faults: its X-Sim-Fault header, else none for the first faultFreeRequests, else the profile's draws. */
function faultPlan(ctx: SimContext, req: IncomingMessage, seq: number, rng: () => number): FaultPlan {
  const faultHeader = req.headers['x-sim-fault'];
  try {
    return typeof faultHeader === 'string'
      ? parseFaultHeader(faultHeader)
      : seq <= ctx.profile.faults.faultFreeRequests
        ? {}
        : drawFaults(ctx.profile.faults, rng);
  } catch (e) {
    throw new RequestError(400, (e as Error).message, 'X-Sim-Fault');
  }
}

/** The fault-status answer: 429, 503 or 500 in the personality's error shape. */
function answerFaultStatus(ctx: SimContext, res: ServerResponse, s: number): void {
  const [type, msg] =
    s === 429 ? ['RateLimitError', 'Too many requests (simulated)'] : s === 503 ? ['ServiceUnavailableError', 'The request queue is full. (simulated)'] : ['InternalServerError', 'simulated server error'];
  ctx.totals.requestsFailed++;
  const retryAfter = ctx.profile.faults.retryAfterS;
  if (s === 429 && retryAfter > 0) res.setHeader('retry-after', String(retryAfter));
  ctx.sendError(res, s, msg, type);
}

async function handleCompletion(ctx: SimContext, kind: EndpointKind, { req, res, receivedMs }: Call): Promise<void> {
  const { profile, engine, truth } = ctx;
  const idHeader = req.headers['x-request-id'];
  const seq = ++ctx.arrivals;
  ctx.totals.requestsReceived++;
  if (!admit(ctx, res)) return;
  ctx.inFlight++;
  res.once('close', () => ctx.inFlight--);
  const id = typeof idHeader === 'string' && idHeader.length > 0 ? idHeader : `sim-${seq}`;
  const body = await ctx.readBody(req);
  const parsed = parseCompletion(kind, body, profile);
  const rng = mulberry32(requestSeed(profile.seed, typeof idHeader === 'string' ? idHeader : String(seq)));
  const faults = faultPlan(ctx, req, seq, rng);
  // the faults that act before the response: a closed connection, late headers, an error status
  if (faults.closeBefore) {
    ctx.totals.requestsFailed++;
    req.socket.destroy();
    return;
  }
  if (faults.headersDelayMs) await new Promise((r) => setTimeout(r, faults.headersDelayMs));
  if (res.destroyed || res.writableEnded) return;
  if (faults.status !== undefined) return answerFaultStatus(ctx, res, faults.status);
  const record = new TruthRecord(id, receivedMs);
  const chunkId = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${id}`;
  let engineReqRef: EngineRequest | undefined;
  const sink = new CompletionSink({
    profile,
    parsed,
    res,
    truth: record,
    truthStore: truth,
    faults,
    seed: seq % 9973,
    chunkId,
    headersFirst: ctx.surface.headersFirst,
    onFirstToken: (ms) => {
      ctx.ttft.observe(ms / 1000);
      ctx.totals.noteFirstToken(record);
    },
    onEnd: (t) => ctx.totals.noteEnd(t),
    abort: () => {
      if (engineReqRef) engine.abort(engineReqRef);
    },
  });
  const { req: engineReq, promptTokens, promptHash } = buildEngineRequest(profile, parsed, sink, rng, faults);
  engineReqRef = engineReq;
  sink.engineReq = engineReq;
  record.promptTokens = promptTokens;
  record.promptHash = promptHash;
  truth.add(record);
  if (parsed.stream && ctx.surface.headersFirst) sink.writeHead();
  const stop = (): void => {
    if (!sink.isEnded) {
      sink.end('aborted', monoMs());
      engine.abort(engineReq);
    }
  };
  // SGLang's /abort_request names a request by its rid (our X-Request-Id travels as both)
  const rid = typeof body.rid === 'string' ? body.rid : id;
  ctx.running.set(rid, { stop, res });
  res.on('close', () => {
    ctx.running.delete(rid);
    stop();
  });
  ctx.loop.submit(engineReq);
}
