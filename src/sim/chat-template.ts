/**
 * The simulator's chat template. Each message renders as
 *   `<|ROLE|>\n` + content + `\n<|end|>\n`
 * and, with add_generation_prompt (the default), `<|assistant|>\n` follows the last message.
 * Under the sim tokenizer each `<|…|>` marker is one token and the newlines join the token
 * before them, so a chat prompt costs
 *   Σ (countTokens(content) + CHAT_TOKENS_PER_MESSAGE) + CHAT_GENERATION_PROMPT_TOKENS
 * tokens (exact for content that does not start with whitespace; the chat tokenize endpoint
 * renders the same text, so calibration through it is always exact).
 */

export const CHAT_TOKENS_PER_MESSAGE = 2;
export const CHAT_GENERATION_PROMPT_TOKENS = 1;

export interface ChatMessage {
  role: string;
  content: unknown;
}

/** Text of a message's content: a string, or the text parts of an OpenAI content array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    let out = '';
    for (const part of content) {
      if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
        out += (part as { text: string }).text;
      }
    }
    return out;
  }
  return '';
}

function roleTag(role: string): string {
  // keep the marker one token whatever the role name
  const clean = role.replace(/[^a-z_]/gi, '').slice(0, 24) || 'user';
  return `<|${clean}|>`;
}

export function renderChat(messages: readonly ChatMessage[], addGenerationPrompt = true): string {
  let out = '';
  for (const m of messages) out += `${roleTag(String(m.role))}\n${contentText(m.content)}\n<|end|>\n`;
  if (addGenerationPrompt) out += '<|assistant|>\n';
  return out;
}
