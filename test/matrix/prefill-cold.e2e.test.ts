/**
 * A prefill row is a cold prefill also when the server has no tokenize endpoint: prompt
 * calibration then measures through real requests, and those must not warm the prefix the prefill
 * row then sends (that would report a prefix-cache hit as prompt tok/s).
 */
import { afterAll, describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { runPrefillRequest } from '../../src/load/prefill.js';
import { openRun } from '../../src/matrix/open.js';
import { calibrationTwin, RunPrompts } from '../../src/matrix/prompts.js';
import { startSim, type SimHandle } from '../../src/sim/index.js';

describe('cold prefill with estimated calibration (no tokenize endpoint: Ollama personality)', () => {
  let sim: SimHandle | undefined;
  afterAll(() => sim?.close());

  test('calibrationTwin changes the first word only, keeping the length', () => {
    const text = 'Run abc123, context 4096. lorem ipsum';
    const twin = calibrationTwin(text, 'abc123');
    expect(twin).toBe('Cal abc123, context 4096. lorem ipsum');
    expect(twin).toHaveLength(text.length);
  });

  test('the prefill request hits no cached prefix', async () => {
    sim = await startSim({ profile: 'tiny', personality: 'ollama', thread: true });
    const cfg = resolveSuite({ target: { url: sim.url } }, {});
    const opened = await openRun(cfg);
    try {
      expect(opened.session.facts.tokenizePath).toBeUndefined();
      const prompts = new RunPrompts(opened.session, 'shared');
      const row = await prompts.rowPrompt(4096, 1);
      expect(row.mode).toBe('estimated');
      const t = await runPrefillRequest(opened.session, 4096, prompts.forCell(row, 1).scoutPrompts()[0]!);
      expect(t.end?.kind).toBe('done');
      const truth = (await (await fetch(`${sim.url}/_sim/truth/${encodeURIComponent(t.id)}`)).json()) as {
        promptTokens: number;
        cachedTokens: number;
      };
      expect(truth.promptTokens).toBeGreaterThan(4096 - 64);
      expect(truth.cachedTokens).toBe(0);

      // a repeat of the row (LLM_BENCH_REPEAT) gets its own prompt, cold too, of the same size
      const variant = await prompts.rowPrompt(4096, 1, 2);
      expect(variant.text).not.toBe(row.text);
      const t2 = await runPrefillRequest(opened.session, 4096, prompts.forCell(variant, 1).scoutPrompts()[0]!, undefined, 2);
      expect(t2.end?.kind).toBe('done');
      expect(t2.id).not.toBe(t.id);
      const truth2 = (await (await fetch(`${sim.url}/_sim/truth/${encodeURIComponent(t2.id)}`)).json()) as typeof truth;
      expect(truth2.cachedTokens).toBe(0);
      // calibrated to the same target on its own: the same bound as the row's prompt (two prompts each
      // within the calibration tolerance can differ by twice it)
      expect(truth2.promptTokens).toBeGreaterThan(4096 - 64);
    } finally {
      await opened.close();
    }
  });
});
