/** Engine adapters: request shape, chunk decoding, probe, metrics, tokenize. */
export type * from './types.js';
export { detectEngine, getAdapter, ALL_ENGINE_KINDS, SUPPORTED_ENGINE_KINDS, UNDETECTED_NOTE, type EngineDetection } from './detect.js';
export { OpenAIAdapter, decodeOpenAIChunk, probeModels, parseModelsList, ProbeError, type ModelEntry, type ModelsProbe } from './openai.js';
export { VllmAdapter, vllmMetricsFromSamples, vllmCacheFacts } from './vllm.js';
export { SglangAdapter, sglangMetricsFromSamples, sglangServerInfoFacts, SGLANG_REPLICA_LABELS } from './sglang.js';
export { parseErrorBody, parseErrorJson, type ParsedErrorBody } from './errors.js';
export { parsePrometheus, parseSampleLine, sumMetric, sumMetricOverReplicas, meanMetric, selectMetric, readLabels, filterIfPresent, type PromSample, type PromParseResult } from './prometheus.js';
export { httpCall, getJson, postJson, tryCall, closeControlAgent, controlAgent, HttpCallError, DEFAULT_CONTROL_TIMEOUT_MS, type HttpResult, type HttpCallOptions } from './http.js';
export { LlamacppAdapter, decodeLlamacppChunk, parseLlamaTimings, llamacppPropsFacts, slotsState } from './llamacpp.js';
export { TgiAdapter, tgiMetricsFromSamples, tgiInfoFacts } from './tgi.js';
export { TrtllmAdapter, trtllmStatsSample, trtllmStatsFacts, trtllmPrometheusSample, latestIterationStats } from './trtllm.js';
export { OllamaAdapter, ollamaLoadedModel } from './ollama.js';
export { readHistogram } from './prometheus.js';
