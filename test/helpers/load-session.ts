/** A LoadSession for the generic OpenAI adapter against a test server (no probe, no metrics unless given). */
import { ConnectionPolicy } from '../../src/client/connections.js';
import { OpenAIAdapter } from '../../src/engines/openai.js';
import type { LoadSession } from '../../src/load/session.js';
import type { MetricsSample } from '../../src/shapes/engine.js';

export function openaiSession(
  baseUrl: string,
  o: { runId?: string; maxOutputTokens?: number; readMetrics?: () => Promise<MetricsSample | undefined>; hasMetrics?: boolean } = {},
): LoadSession {
  const adapter = new OpenAIAdapter();
  if (o.readMetrics) Object.assign(adapter, { readMetrics: o.readMetrics });
  return {
    target: { baseUrl },
    adapter,
    facts: { engine: { value: 'openai', source: 'test' }, model: { value: 'm', source: 'test' } },
    model: 'm',
    endpoint: 'chat',
    maxOutputTokens: o.maxOutputTokens ?? 16,
    timeouts: { headersMs: 5000, stallMs: 5000, unreachableRetryMs: 0 },
    runId: o.runId ?? 'test',
    connections: new ConnectionPolicy(),
    hasMetrics: o.hasMetrics ?? o.readMetrics !== undefined,
  };
}
