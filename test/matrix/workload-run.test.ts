/**
 * The run's workload, opened once (src/matrix/workload-run.ts): a file is recorded by its name and
 * content, its lines are counted once (answers size the output where a line gives none, too-long
 * lines are skipped and counted), and multiTurn with rate cells is refused.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { countFileLines, largestRequests, multiTurnLengthNote, openRunWorkload, recordedWorkloadText, requestSizesByRow, rowRequestSizes } from '../../src/matrix/workload-run.js';
import { planMatrix } from '../../src/matrix/plan.js';
import { readPromptFile } from '../../src/workload/prompt-file.js';
import { workloadRequests, type PromptSizer } from '../../src/workload/cell-requests.js';
import { renderMessages, seededOrder } from '../../src/workload/prompt-file.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-wlrun-'));
const path = join(dir, 'prompts.jsonl');
writeFileSync(
  path,
  [
    JSON.stringify({ text: 'one two three' }),
    JSON.stringify({ conversations: [{ from: 'human', value: 'a b' }, { from: 'gpt', value: 'w w w w w w w w w w' }, { from: 'human', value: 'later' }] }),
    JSON.stringify({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y y y y' }] }),
    JSON.stringify({ text: 'own length', output_tokens: 5 }),
    JSON.stringify({ text: 'long '.repeat(90).trim() }),
  ].join('\n'),
);

/** counts words, plus 3 tokens of "chat template" */
const sizer: PromptSizer = {
  calibrate: () => Promise.reject(new Error('not used')),
  count: (text) => Promise.resolve(text.split(/\s+/).filter((w) => w !== '').length + 3),
};

describe('openRunWorkload and countFileLines', () => {
  test('a file is read once, recorded by name and sha256; answers size the outputs; too-long lines are counted as skipped', async () => {
    const run = openRunWorkload({ kind: 'file', path, seed: 3 }, true);
    expect(run.info).toMatchObject({ kind: 'file', text: 'file:prompts.jsonl,seed=3', file: { name: 'prompts.jsonl', lines: 5, used: 5, skipped: 0 } });
    expect(run.info.file!.sha256).toBe(readPromptFile(path).sha256);
    expect(run.file!.lines[1]!.replyText).toBe('w w w w w w w w w w');
    expect(run.file!.lines[2]!.replyText).toBe('y y y y');
    // max model length 100, run's max output 8: line 5 (90 words + 3 + 8) does not fit
    await countFileLines(run, sizer, 100, 8);
    const lines = run.file!.lines;
    expect(lines.map((l) => l.outputTokens)).toEqual([undefined, 10, 4, 5, undefined]);
    expect(run.info.file).toMatchObject({ used: 4, skipped: 1, outputFromReplies: 2 });
    // each line's count is kept, so a cell's requests skip by it without counting again
    expect(lines.every((l) => typeof l.promptTokens === 'number')).toBe(true);
    expect(lines[4]!.promptTokens! + 8).toBeGreaterThan(100);
  });

  test("a cell's file requests skip by the run's counts, without counting a line again", async () => {
    const run = openRunWorkload({ kind: 'file', path, seed: 3 }, false);
    await countFileLines(run, sizer, 100, 8);
    const noRecount: PromptSizer = { calibrate: sizer.calibrate, count: () => Promise.reject(new Error('counted again')) };
    const requests = workloadRequests({
      workload: { kind: 'file', path, seed: 3 },
      runId: 'r',
      cellKey: '0/1',
      maxOutputTokens: 8,
      maxModelLen: 100,
      sizer: noRecount,
      file: { prompts: run.file!, order: seededOrder(run.file!.lines.length, 3), render: renderMessages },
    });
    await requests.prepare(4);
    expect(requests.skipped).toBe(1);
    expect(requests.sizingCalls).toBe(0);
  });

  test('without a counter nothing is counted: outputs stay the run\'s, nothing is skipped', async () => {
    const run = openRunWorkload({ kind: 'file', path, seed: 1 }, false);
    await countFileLines(run, { calibrate: sizer.calibrate }, 100, 8);
    expect(run.file!.lines.map((l) => l.outputTokens)).toEqual([undefined, undefined, undefined, 5, undefined]);
    expect(run.info.file).toMatchObject({ used: 5, skipped: 0 });
    expect(run.info.file!.outputFromReplies).toBeUndefined();
    expect(run.file!.lines.some((l) => l.promptTokens !== undefined)).toBe(false);
  });

  test('multiTurn with rate cells is refused naming the variables; the recorded text of other kinds is the canonical one', () => {
    const mt = { kind: 'multiTurn' as const, turns: 3, userTokens: 64, systemTokens: 0, thinkMs: { kind: 'fixed' as const, value: 0 }, seed: 1 };
    expect(() => openRunWorkload(mt, true)).toThrow(/multiTurn workload runs in the closed-loop cells only.*LLM_BENCH_RATES=none/);
    expect(openRunWorkload(mt, false).info.text).toBe('multiTurn:turns=3,user=64,system=0,think=0s,seed=1');
    expect(recordedWorkloadText({ kind: 'sharedPrefix', groups: 2, prefixTokens: 64, suffixTokens: 8, seed: 1 })).toBe('sharedPrefix:groups=2,prefix=64,suffix=8,seed=1');
  });
});

describe("rowRequestSizes: a row's requests as the KV cache holds them (Over capacity of concurrency and rate cells)", () => {
  test("synthetic and sharedPrefix rows: the row context and the run's max output, mean and largest alike", () => {
    const synthetic = openRunWorkload({ kind: 'synthetic' }, true);
    expect(rowRequestSizes(synthetic, 8192, 4096, undefined)).toEqual({ mean: { input: 8192, output: 4096 }, largest: { input: 8192, output: 4096 } });
    const shared = openRunWorkload({ kind: 'sharedPrefix', groups: 2, prefixTokens: 3072, suffixTokens: 1024, seed: 1 }, true);
    expect(rowRequestSizes(shared, 4096, 256, undefined).largest).toEqual({ input: 4096, output: 256 });
  });

  test("multiTurn: the last turn is the largest (system + every user message + each earlier reply at the max output with its template's tokens); the mean is over the turns", () => {
    const w = { kind: 'multiTurn' as const, turns: 4, userTokens: 128, systemTokens: 128, thinkMs: { kind: 'fixed' as const, value: 100 }, seed: 1 };
    const run = openRunWorkload(w, false);
    const sizes = rowRequestSizes(run, 256, 512, undefined);
    // turn 4: 128 + 4 × 128 + 3 × (512 + 32) = 2,272 prompt tokens, asking for 512 more
    expect(sizes.largest).toEqual({ input: 2272, output: 512 });
    // turns 1–4: 256, 928, 1,600, 2,272
    expect(sizes.mean).toEqual({ input: (256 + 928 + 1600 + 2272) / 4, output: 512 });
    // one turn: the first turn is the only one (the row's context + the max output)
    expect(rowRequestSizes(openRunWorkload({ ...w, turns: 1 }, false), 256, 512, undefined).largest).toEqual({ input: 256, output: 512 });
    // the plan: 4 × (256 + 512) = 3,072 fit 8,192 tokens, but 4 × 2,784 = 11,136 do not; 2 × 2,784 do
    const matrix = { contexts: [256], concurrency: [2, 4], maxOutputTokens: 512, prefill: [] } as unknown as Parameters<typeof planMatrix>[0];
    const cells = planMatrix(matrix, { kvCapacityTokens: 8192 }, largestRequests(run, 512, undefined)).cells;
    expect(cells.map((c) => c.overCapacity)).toEqual([undefined, { requiredTokens: 11_136, kvCapacityTokens: 8192, requestTokens: 2784 }]);
    // no request holds more than the max model length (llama.cpp -c 8192 -np 4: 2,048 a slot, which cuts turn 3 on): 4 × 2,048 fit 8,192
    expect(rowRequestSizes(run, 256, 512, 2048)).toEqual({ mean: { input: (256 + 928 + 1536 + 1536) / 4, output: 512 }, largest: { input: 1536, output: 512 } });
    expect(planMatrix(matrix, { kvCapacityTokens: 8192 }, largestRequests(run, 512, 2048)).cells.map((c) => c.overCapacity)).toEqual([undefined, undefined]);
    expect(planMatrix(matrix, { kvCapacityTokens: 8000 }, largestRequests(run, 512, 2048)).cells[1]!.overCapacity).toEqual({ requiredTokens: 8192, kvCapacityTokens: 8000, requestTokens: 2048 });
  });

  test("lengths: the drawn lengths, not the run's max output (a 4,096-token default made 8/s Over capacity for requests of at most 64 tokens)", () => {
    const run = openRunWorkload({ kind: 'lengths', input: { kind: 'fixed', value: 512 }, output: { kind: 'uniform', min: 16, max: 64 }, seed: 1 }, true);
    const sizes = rowRequestSizes(run, 512, 4096, undefined);
    expect(sizes.largest).toEqual({ input: 512, output: 64 });
    expect(sizes.mean.input).toBe(512);
    expect(sizes.mean.output).toBeCloseTo(40, 9);
    // the plan: 100 × (512 + 64) fits 60,000 tokens; 100 × (512 + 4096) would not
    const matrix = { contexts: [512], concurrency: [100], maxOutputTokens: 4096, prefill: [] } as unknown as Parameters<typeof planMatrix>[0];
    expect(planMatrix(matrix, { kvCapacityTokens: 60_000 }).cells[0]!.overCapacity).toEqual({ requiredTokens: 460_800, kvCapacityTokens: 60_000, requestTokens: 4608 });
    expect(planMatrix(matrix, { kvCapacityTokens: 60_000 }, largestRequests(run, 4096, undefined)).cells[0]!.overCapacity).toBeUndefined();
    expect(planMatrix(matrix, { kvCapacityTokens: 50_000 }, largestRequests(run, 4096, undefined)).cells[0]!.overCapacity).toEqual({ requiredTokens: 57_600, kvCapacityTokens: 50_000, requestTokens: 576 });
  });

  test("file: the counted lines that are sent, each with its own output (or the run's); the largest is one line's; uncounted prompts are the row's 0, whose exemption stays", async () => {
    const run = openRunWorkload({ kind: 'file', path, seed: 3 }, true);
    // before counting: prompts unknown (the row's 0), outputs the line's own or the run's 8
    expect(rowRequestSizes(run, 0, 8, 100)).toEqual({ mean: { input: 0, output: (8 + 8 + 8 + 5 + 8) / 5 }, largest: { input: 0, output: 8 } });
    await countFileLines(run, sizer, 100, 8);
    // counted: line 5 is skipped (too long); outputs 8 (the run's), 10 and 4 (replies), 5 (its own)
    const sizes = rowRequestSizes(run, 0, 8, 100);
    const lines = run.file!.lines.slice(0, 4);
    const prompts = lines.map((l) => l.promptTokens!);
    const outputs = [8, 10, 4, 5];
    expect(sizes.mean.input).toBeCloseTo(prompts.reduce((a, b) => a + b, 0) / 4, 9);
    expect(sizes.mean.output).toBe((8 + 10 + 4 + 5) / 4);
    // the largest request is the line with the most prompt and output together, not the most of each from two lines
    const totals = prompts.map((p, i) => p + outputs[i]!);
    const k = totals.indexOf(Math.max(...totals));
    expect(sizes.largest).toEqual({ input: prompts[k], output: outputs[k] });
    // the row's context stays 0: within the server's max running requests its cells run, as a 0 row's do
    const matrix = { contexts: [0], concurrency: [4, 8], maxOutputTokens: 8, prefill: [] } as unknown as Parameters<typeof planMatrix>[0];
    const plan = planMatrix(matrix, { kvCapacityTokens: 50, maxRunningRequests: 4 }, largestRequests(run, 8, 100));
    expect(plan.cells[0]!.overCapacity).toBeUndefined();
    expect(plan.cells[1]!.overCapacity).toEqual({ requiredTokens: 8 * totals[k]!, kvCapacityTokens: 50, requestTokens: totals[k] });
  });

  test('a file of 300,000 lines is sized in one pass (no argument spread, which overflows the stack)', () => {
    const run = openRunWorkload({ kind: 'file', path, seed: 3 }, true);
    const one = run.file!.lines[0]!;
    run.file!.lines = Array.from({ length: 300_000 }, (_, i) => ({ ...one, line: i + 1, promptTokens: 10 + (i % 7), outputTokens: 5 }));
    const sizes = rowRequestSizes(run, 0, 8, undefined);
    expect(sizes.largest).toEqual({ input: 16, output: 5 });
    expect(sizes.mean.output).toBe(5);
    // by row, each row is sized once: the capacity search and every rate cell ask again
    const byRow = requestSizesByRow(run, 8, undefined);
    expect(byRow(0)).toEqual(sizes);
    expect(byRow(0)).toBe(byRow(0));
  });
});

describe('multiTurnLengthNote: where a conversation can outgrow the max model length', () => {
  const w = { kind: 'multiTurn' as const, turns: 4, userTokens: 128, systemTokens: 128, thinkMs: { kind: 'fixed' as const, value: 100 }, seed: 1 };
  test('names the first turn that can pass it, with the sum and the template (the real llama.cpp run: 2,048-token slots, 512 output tokens)', () => {
    // turn 3: 128 + 3 × 640 + 2 × 32 = 2,112 (the real server counted 1,596 prompt tokens for it, + 512 output = 2,108)
    const note = multiTurnLengthNote(w, 512, 2048);
    expect(note).toContain(
      'multiTurn: turn 3 of 4 can hold about 2,112 tokens (system 128 + 3 × (user 128 + max output 512) + about 64 of chat template for the 2 replies it re-sends), over the server\'s max model length 2,048',
    );
    expect(note).toContain('its cell reads Errors');
    expect(note).toContain('lower turns= or user= in LLM_BENCH_WORKLOAD, or LLM_BENCH_MAX_TOKENS');
    // turn 2: 128 + 2 × 640 + 32 = 1,440; turn 3 at 480 output: 128 + 3 × 608 + 64 = 2,016, within
    expect(multiTurnLengthNote({ ...w, turns: 2 }, 512, 2048)).toBeUndefined();
    expect(multiTurnLengthNote(w, 480, 2048)).toContain('turn 4 of 4 can hold about 2,656 tokens');
    expect(multiTurnLengthNote(w, 256, 2048)).toBeUndefined();
  });
  test('nothing where the first turn is already past it (the row is Not run), the length is unknown, or the workload is another', () => {
    expect(multiTurnLengthNote(w, 4096, 2048)).toBeUndefined();
    expect(multiTurnLengthNote(w, 512, undefined)).toBeUndefined();
    expect(multiTurnLengthNote({ kind: 'lengths', input: { kind: 'fixed', value: 10 }, output: { kind: 'fixed', value: 10 }, seed: 1 }, 4096, 100)).toBeUndefined();
  });
});
