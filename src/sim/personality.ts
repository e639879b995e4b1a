/**
 * What differs between the vLLM and SGLang personalities (ENGINES.md §1, §2): chunk shapes,
 * error bodies. Chunk strings are assembled from per-request prebuilt heads and tails, so a token
 * chunk costs one concatenation.
 */

import type { SimPersonality } from './profiles.js';

export interface UsageCounts {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export function usageJson(u: UsageCounts): string {
  return (
    `{"prompt_tokens":${u.promptTokens},"total_tokens":${u.promptTokens + u.completionTokens},` +
    `"completion_tokens":${u.completionTokens},"prompt_tokens_details":{"cached_tokens":${u.cachedTokens}}}`
  );
}

/** Error body in the personality's shape. */
export function errorBody(personality: SimPersonality, status: number, message: string, type: string, param: string | null = null): string {
  const inner = { message, type, param, code: status };
  return JSON.stringify(personality === 'vllm' ? { error: inner } : { object: 'error', ...inner });
}

/** The `data: {...}` error event sent inside a stream (both engines then send [DONE]). */
export function errorEvent(message: string, code: number): string {
  return `data: ${JSON.stringify({ error: { message, type: 'InternalServerError', param: null, code } })}\n\n`;
}

export const DONE_EVENT = 'data: [DONE]\n\n';

/** Builds one request's stream chunks. */
export class ChunkWriter {
  private readonly contentHead: string;
  private readonly reasoningHead: string;
  private readonly open: string;
  private readonly tailNoFinish: string;
  private readonly chat: boolean;

  constructor(
    readonly personality: SimPersonality,
    kind: 'chat' | 'completions',
    id: string,
    model: string,
    createdS: number,
  ) {
    this.chat = kind === 'chat';
    const object = this.chat ? 'chat.completion.chunk' : 'text_completion';
    this.open = `data: {"id":"${id}","object":"${object}","created":${createdS},"model":${JSON.stringify(model)},"choices":`;
    const reasoningField = personality === 'vllm' ? 'reasoning' : 'reasoning_content';
    if (this.chat) {
      this.contentHead = `${this.open}[{"index":0,"delta":{"content":"`;
      this.reasoningHead = `${this.open}[{"index":0,"delta":{"${reasoningField}":"`;
      this.tailNoFinish = `"},"logprobs":null,"finish_reason":null}]}\n\n`;
    } else {
      this.contentHead = `${this.open}[{"index":0,"text":"`;
      this.reasoningHead = this.contentHead;
      this.tailNoFinish = `","logprobs":null,"finish_reason":null}]}\n\n`;
    }
  }

  /** Role chunk (chat only): `{"role":"assistant","content":""}`. */
  role(): string {
    if (!this.chat) return '';
    return `${this.open}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`;
  }

  /** A chunk of generated text; `usage` given = continuous usage stats on this chunk. */
  tokens(text: string, reasoning: boolean, usage: string | undefined): string {
    const head = reasoning ? this.reasoningHead : this.contentHead;
    if (usage === undefined) return head + text + this.tailNoFinish;
    return `${head}${text}${this.tailNoFinish.slice(0, -3)},"usage":${usage}}\n\n`;
  }

  /**
   * The last text chunk. vLLM puts finish_reason on it; SGLang sends the text, then a separate
   * chunk with an empty delta and the finish_reason.
   */
  last(text: string, reasoning: boolean, finish: string, usage: string | undefined): string {
    const u = usage === undefined ? '' : `,"usage":${usage}`;
    const finishDelta = this.chat ? `"delta":{}` : `"text":""`;
    if (this.personality === 'vllm') {
      const head = reasoning ? this.reasoningHead : this.contentHead;
      const close = this.chat ? `"}` : `"`;
      return `${head}${text}${close},"logprobs":null,"finish_reason":"${finish}"}]${u}}\n\n`;
    }
    const textChunk = text.length > 0 ? this.tokens(text, reasoning, usage) : '';
    return `${textChunk}${this.open}[{"index":0,${finishDelta},"logprobs":null,"finish_reason":"${finish}","matched_stop":null}]${u}}\n\n`;
  }

  /** Usage-only final chunk (`choices: []`). */
  usageOnly(usage: string): string {
    return `${this.open}[],"usage":${usage}}\n\n`;
  }
}
