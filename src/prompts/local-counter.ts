/**
 * Prompt counting with a local tokenizer (calibrate.ts, exact mode when the server has no
 * tokenize endpoint): the content's count plus the chat template's tokens, which the local
 * tokenizer cannot see, learnt once from the server's usage.
 */
import { ConfigError } from '../errors.js';
import { SHORTEST_PROMPT } from './synth.js';

/** A local tokenizer's count of a text (src/tokenizer/local.ts LocalTokenizer). */
export interface LocalCounter {
  count(text: string): number;
}

/**
 * Counts a prompt with a local tokenizer: its content's count plus the chat template's tokens,
 * measured once as the server's usage.prompt_tokens of the shortest prompt minus the local count
 * of it. A server without usage (the measurement throws a ConfigError, or there is no measurement)
 * leaves the template out: `templateTokens()` stays undefined and the count is the content's.
 */
export function localPromptCounter(
  tokenizer: LocalCounter,
  measurePromptTokens?: (text: string) => Promise<number>,
): { count: (text: string) => Promise<number>; templateTokens: () => number | undefined } {
  let template: Promise<number | undefined> | undefined;
  let known: number | undefined;
  const measureTemplate = async (): Promise<number | undefined> => {
    if (!measurePromptTokens) return undefined;
    let usage: number;
    try {
      usage = await measurePromptTokens(SHORTEST_PROMPT);
    } catch (error) {
      if (error instanceof ConfigError) return undefined; // no usage.prompt_tokens: content only
      throw error;
    }
    known = Math.max(0, usage - tokenizer.count(SHORTEST_PROMPT));
    return known;
  };
  return {
    count: async (text) => {
      if (!template) {
        template = measureTemplate();
        template.catch(() => (template = undefined));
      }
      return tokenizer.count(text) + ((await template) ?? 0);
    },
    templateTokens: () => known,
  };
}
