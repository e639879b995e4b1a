/**
 * The simulated engine's service limit: the most requests per second it can finish at a context
 * and output length, from its profile alone (issue 22 "truth from the simulator"). An open-loop
 * rate above it saturates the server; the tests check the client's Saturated verdict against it.
 *
 * At full batch (maxRunningRequests = R running) a step takes
 *   step = stepBaseMs + stepPerRequestMs·R + stepPerKvTokenMs·R·(context + N/2)   (mean KV tokens)
 * and emits tokensPerStep tokens per request, so a request of N output tokens holds its slot for
 * N / tokensPerStep steps. Each new request's prefill (context × prefillPerTokenMs) lengthens one
 * step for the whole batch. Per second: 1000 ms = μ·(N·step / (tokensPerStep·R)) + μ·context·p, so
 *   μ = 1000 / (N·step / (tokensPerStep·R) + context·prefillPerTokenMs)      requests/s.
 * Request overheads before admission (requestOverheadMs, tokenization) delay each request but
 * happen outside the step loop, so they do not lower μ. A prefix-cached context prefills only its
 * uncached tail: pass the tokens that are computed.
 */
import type { SimProfileParams } from './profiles.js';

export function serviceLimitPerS(
  p: Pick<SimProfileParams, 'maxRunningRequests' | 'stepBaseMs' | 'stepPerRequestMs' | 'stepPerKvTokenMs' | 'prefillPerTokenMs' | 'tokensPerStep'>,
  request: { contextTokens: number; prefillTokens?: number; outputTokens: number },
): number {
  const r = p.maxRunningRequests;
  const n = request.outputTokens;
  const step = p.stepBaseMs + p.stepPerRequestMs * r + p.stepPerKvTokenMs * r * (request.contextTokens + n / 2);
  const prefill = (request.prefillTokens ?? request.contextTokens) * p.prefillPerTokenMs;
  return 1000 / ((n * step) / (p.tokensPerStep * r) + prefill);
}
